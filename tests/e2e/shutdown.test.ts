// Shutdown (issue #25, item 5) on real gateway processes: a stream that ends within GATEWAY_DRAIN_TIMEOUT_MS ends
// whole and the process exits 0; one still open at the deadline ends with the gateway_shutting_down error frame (no
// [DONE]) and the process exits 1; a second signal exits at once, whatever the deadline.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

let mock: OpenAIMock;
beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null });
});
afterAll(async () => {
  await mock.stop();
});

/** A streamed chat call through the gateway to the mock; resolves once the first bytes arrived. */
async function openStream(gw: GatewayProcess) {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gw.adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
      authorization: 'Bearer sk-test',
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four' }] }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  return {
    first: text,
    /** The rest of the body, to its end. */
    async rest(): Promise<string> {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

/** The exit code, or -1 when the process is still running after a wide hang guard. */
const exitCode = (gw: GatewayProcess) => Promise.race([gw.proc.exited, Bun.sleep(20_000).then(() => -1)]);

async function waitForOutput(gw: GatewayProcess, text: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!gw.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" in:\n${gw.output()}`);
    await Bun.sleep(20);
  }
}

describe('shutdown', () => {
  test('a stream that ends within the drain deadline ends whole; exit 0', async () => {
    // Four words, a chunk every 300 ms: the stream outlives the signal but not the default deadline (25 s).
    mock.setBehavior({ kind: 'default', chunkDelayMs: 300 });
    const gw = await startGatewayProcess();
    try {
      const stream = await openStream(gw);
      gw.proc.kill('SIGTERM');
      const body = await stream.rest();
      expect(body).toEndWith('data: [DONE]\n\n');
      expect(body).not.toContain('gateway_shutting_down');
      expect(await exitCode(gw)).toBe(0);
      expect(gw.output()).toContain('shutting down: finishing in-flight requests for at most 25000 ms');
    } finally {
      mock.setBehavior(null);
      await gw.stop();
    }
  }, 60_000);

  test('past GATEWAY_DRAIN_TIMEOUT_MS an open stream ends with the error frame, without [DONE]; exit 1', async () => {
    // The first chunk, then nothing, ever.
    mock.setBehavior({ kind: 'default', stopAfterChunks: 1, end: 'hang' });
    const gw = await startGatewayProcess({ GATEWAY_DRAIN_TIMEOUT_MS: '1000' });
    try {
      const stream = await openStream(gw);
      expect(stream.first).toContain('chat.completion.chunk');
      gw.proc.kill('SIGTERM');
      const body = await stream.rest();
      expect(body).not.toContain('[DONE]');
      const frames = body.split('\n\n').filter(Boolean);
      const last = JSON.parse(frames.at(-1)!.replace(/^data: /, ''));
      expect(last).toEqual({
        error: {
          message: 'The gateway is shutting down and its drain deadline passed before this stream ended; try again',
          type: 'service_unavailable',
          code: 'gateway_shutting_down',
          param: null,
        },
      });
      expect(await exitCode(gw)).toBe(1);
      expect(gw.output()).toContain('drain deadline passed: 1 open streams ended with an error frame');
    } finally {
      mock.setBehavior(null);
      await gw.stop();
    }
  }, 60_000);

  test.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('a second signal (%s) exits at once, long before the deadline', async (second, code) => {
    mock.setBehavior({ kind: 'default', stopAfterChunks: 1, end: 'hang' });
    // Ten minutes: only the second signal can end this process within the hang guard.
    const gw = await startGatewayProcess({ GATEWAY_DRAIN_TIMEOUT_MS: '600000' });
    try {
      await openStream(gw);
      gw.proc.kill('SIGTERM');
      await waitForOutput(gw, 'shutting down: finishing in-flight requests');
      gw.proc.kill(second);
      expect(await exitCode(gw)).toBe(code);
      expect(gw.output()).toContain(`second ${second}: exiting now`);
    } finally {
      mock.setBehavior(null);
      await gw.stop();
    }
  }, 60_000);
});

describe('the container stops within its grace period', () => {
  test("compose's stop_grace_period is longer than its GATEWAY_DRAIN_TIMEOUT_MS plus the frame grace and the bounded flush", async () => {
    const compose = await Bun.file(`${import.meta.dir}/../../docker/compose.yaml`).text();
    const drainMs = Number(/GATEWAY_DRAIN_TIMEOUT_MS: "(\d+)"/.exec(compose)?.[1]);
    const graceS = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]);
    expect(drainMs).toBeGreaterThan(0);
    // drain.ts: 1 s for the frames to reach their clients, at most 5 s for the queues' flush.
    expect(graceS * 1000).toBeGreaterThan(drainMs + 1_000 + 5_000);
  });
});
