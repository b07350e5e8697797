// A client that goes away stops the upstream call: streaming requests aborted after the first chunk close their
// upstream streams within a couple of seconds, a non-streaming request aborted while the upstream delays aborts the
// upstream request, and the gateway's memory goes back to where it was.
//
// The upstream is a Bun.serve in this file that counts what it has open: a request is "open" from its arrival until
// its `req.signal` fires or its response stream is cancelled (whichever comes first; both are counted).
//
// Memory tolerance: VmRSS of the gateway after 3 rounds of 300 aborted streams (900 in all) and a 1.5 s settle must
// be within +48 MiB of its level after a warm-up round of 50. Measured with Bun 1.4.5: +4..9 MiB. A leak of the
// per-request state (upstream body buffers, relay streams, timers: tens of KiB each) would exceed it.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CHAT_BODY, type RobustGateway, startRobustGateway } from './support.ts';

const RSS_TOLERANCE_KIB = 48 * 1024;

const enc = new TextEncoder();
const frame = (content: string, first = false) =>
  enc.encode(
    `data: ${JSON.stringify({
      id: 'chatcmpl-slow',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: first ? { role: 'assistant', content } : { content }, finish_reason: null }],
    })}\n\n`,
  );

interface Upstream {
  url: string;
  arrived: number;
  open: number;
  signalled: number;
  cancelled: number;
  stop(): void;
}

/**
 * Streams one SSE chunk at once, then one every 250 ms, forever. A non-streaming call, or a streaming one with
 * `user: "delay-headers"`, waits 30 s before answering at all (unless the caller goes away).
 */
function startSlowUpstream(): Upstream {
  const state = { arrived: 0, open: 0, signalled: 0, cancelled: 0 };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean; user?: string };
      state.arrived++;
      state.open++;
      let closed = false;
      const close = () => {
        if (!closed) {
          closed = true;
          state.open--;
        }
      };
      req.signal.addEventListener('abort', () => {
        state.signalled++;
        close();
      });
      if (!body.stream || body.user === 'delay-headers') {
        // Answers after 30 s unless the caller goes away first.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 30_000);
          req.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        close();
        if (body.stream) return new Response('data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
        return Response.json({ id: 'late', object: 'chat.completion', choices: [] });
      }
      let timer: Timer | undefined;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(frame('Hello', true));
          timer = setInterval(() => {
            try {
              controller.enqueue(frame(' more'));
            } catch {
              clearInterval(timer);
            }
          }, 250);
        },
        cancel() {
          state.cancelled++;
          clearInterval(timer);
          close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
    },
  });
  return Object.assign(state, { url: `http://127.0.0.1:${server.port}/v1`, stop: () => void server.stop(true) });
}

let gw: RobustGateway;
let upstream: Upstream;

beforeAll(async () => {
  upstream = startSlowUpstream();
  gw = await startRobustGateway({});
}, 30_000); // a hang guard: a gateway process can take over bun's 5 s default to start on a loaded CI machine
afterAll(async () => {
  await gw?.stop();
  upstream?.stop();
});

function headers(): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-gateway-api-key': gw.adminKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': upstream.url,
    authorization: 'Bearer sk-disconnect',
  };
}

/** `n` streaming calls at once; each is aborted by the client right after its first chunk arrived. */
async function abortedStreams(n: number): Promise<string[]> {
  const firstChunks = await Promise.all(
    Array.from({ length: n }, async () => {
      const controller = new AbortController();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ ...CHAT_BODY, stream: true }),
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      controller.abort();
      await reader.cancel().catch(() => {});
      return new TextDecoder().decode(first.value);
    }),
  );
  return firstChunks;
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!cond() && Date.now() - started < timeoutMs) await Bun.sleep(20);
  return Date.now() - started;
}

describe('client disconnect', () => {
  test('300 streams aborted after the first chunk: every upstream stream is closed within 2 s; RSS returns', async () => {
    // warm-up: JIT, connection pools, allocator arenas
    await abortedStreams(50);
    await waitUntil(() => upstream.open === 0, 3_000);
    await Bun.sleep(1_000);
    const baseline = gw.rssKiB();
    const rounds: { arrived: number; openAtAbort: number; closedAfterMs: number; openAfter: number; rssKiB: number }[] = [];
    for (let round = 0; round < 3; round++) {
      const arrivedBefore = upstream.arrived;
      const chunks = await abortedStreams(300);
      expect(chunks.every((c) => c.includes('Hello'))).toBe(true);
      const openAtAbort = upstream.open;
      const closedAfterMs = await waitUntil(() => upstream.open === 0, 2_000);
      rounds.push({ arrived: upstream.arrived - arrivedBefore, openAtAbort, closedAfterMs, openAfter: upstream.open, rssKiB: gw.rssKiB() });
    }
    await Bun.sleep(1_500);
    const after = gw.rssKiB();
    // every call reached the upstream, and every upstream stream was closed within 2 s of the last abort
    for (const r of rounds) expect({ arrived: r.arrived, openAfter: r.openAfter }).toEqual({ arrived: 300, openAfter: 0 });
    expect(upstream.signalled + upstream.cancelled).toBeGreaterThanOrEqual(950);
    // memory back within the tolerance (see the file header)
    expect({ baselineKiB: baseline, afterKiB: after, rounds, withinTolerance: after - baseline <= RSS_TOLERANCE_KIB }).toMatchObject({ withinTolerance: true });
    // and the gateway is fine
    const health = await fetch(`${gw.url}/health`);
    expect(health.status).toBe(200);
  }, 60_000);

  test('a non-streaming call aborted while the upstream delays: the upstream request is aborted (req.signal fires)', async () => {
    const before = { arrived: upstream.arrived, signalled: upstream.signalled };
    const controller = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: headers(), body: JSON.stringify(CHAT_BODY), signal: controller.signal });
    await waitUntil(() => upstream.arrived > before.arrived, 5_000);
    expect(upstream.arrived).toBe(before.arrived + 1);
    await Bun.sleep(100);
    controller.abort();
    await pending.catch(() => {});
    const ms = await waitUntil(() => upstream.signalled > before.signalled, 3_000);
    expect({ signalled: upstream.signalled - before.signalled, open: upstream.open }).toEqual({ signalled: 1, open: 0 });
    expect(ms).toBeLessThan(2_000);
  }, 20_000);

  test('50 non-streaming calls aborted at once, and a streaming call aborted before its headers arrive', async () => {
    const before = { arrived: upstream.arrived, signalled: upstream.signalled };
    const controllers = Array.from({ length: 50 }, () => new AbortController());
    const pending = controllers.map((c) =>
      fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: headers(), body: JSON.stringify(CHAT_BODY), signal: c.signal }).catch(() => {}),
    );
    await waitUntil(() => upstream.arrived >= before.arrived + 50, 5_000);
    for (const c of controllers) c.abort();
    await Promise.all(pending);
    await waitUntil(() => upstream.open === 0, 3_000);
    expect({ arrived: upstream.arrived - before.arrived, signalled: upstream.signalled - before.signalled, open: upstream.open }).toEqual({
      arrived: 50,
      signalled: 50,
      open: 0,
    });

    const before2 = { arrived: upstream.arrived, signalled: upstream.signalled };
    const controller = new AbortController();
    const stream = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ ...CHAT_BODY, stream: true, user: 'delay-headers' }),
      signal: controller.signal,
    }).catch(() => {});
    await waitUntil(() => upstream.arrived > before2.arrived, 5_000);
    controller.abort();
    await stream;
    await waitUntil(() => upstream.signalled > before2.signalled, 3_000);
    expect({ arrived: upstream.arrived - before2.arrived, signalled: upstream.signalled - before2.signalled, open: upstream.open }).toEqual({
      arrived: 1,
      signalled: 1,
      open: 0,
    });

    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    expect(gw.trap.seen).toEqual([]);
  }, 20_000);
});
