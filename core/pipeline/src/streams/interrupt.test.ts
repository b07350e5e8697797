// The end of a drain deadline: interruptOpenStreams ends every stream being relayed with the error's frame (no
// [DONE]), stops its upstream, and leaves streams that already ended alone.
import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { OpenAiSsePassThrough } from './processors.ts';
import { interruptOpenStreams, relayStream, type StreamEnd } from './relay.ts';

const enc = new TextEncoder();
const CHUNK = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n';
const shuttingDown = () => new GatewayError({ code: 'gateway_shutting_down', type: 'service_unavailable', status: 503, message: 'drain deadline' });

function relay() {
  const aborted: unknown[] = [];
  const ends: StreamEnd[] = [];
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const upstream = new ReadableStream<Uint8Array>({ start: (c) => void (ctrl = c) });
  const stream = relayStream(upstream, {
    provider: 'openai',
    processor: new OpenAiSsePassThrough(false),
    captureLimit: 10_000,
    idleTimeoutMs: 60_000,
    abortUpstream: (reason) => void aborted.push(reason),
    onEnd: (end) => void ends.push(end),
  });
  return { stream, aborted, ends, send: (text: string) => ctrl.enqueue(enc.encode(text)), close: () => ctrl.close() };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe('interruptOpenStreams', () => {
  test('a stream waiting for its upstream ends with the error frame, without [DONE]; its upstream is aborted', async () => {
    const open = relay();
    open.send(CHUNK);
    const reader = open.stream.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(CHUNK);
    const pending = reader.read();
    await Bun.sleep(10);
    expect(interruptOpenStreams(shuttingDown())).toBeGreaterThanOrEqual(1);
    const frame = new TextDecoder().decode((await pending).value);
    expect(JSON.parse(frame.replace(/^data: /, ''))).toMatchObject({ error: { code: 'gateway_shutting_down' } });
    expect((await reader.read()).done).toBe(true);
    expect(open.aborted).toHaveLength(1);
    expect(open.ends[0]).toMatchObject({ complete: false, clientAborted: false, error: { code: 'gateway_shutting_down' } });
  });

  test('a stream not being read fails at its next read; a finished stream is no longer counted', async () => {
    const done = relay();
    done.send(`${CHUNK}data: [DONE]\n\n`);
    done.close();
    expect(await readAll(done.stream)).toEndWith('data: [DONE]\n\n');

    // Streams other test files left open in this process are ended first, so that the count is this test's.
    interruptOpenStreams(shuttingDown());
    const idle = relay();
    expect(interruptOpenStreams(shuttingDown())).toBe(1);
    const text = await readAll(idle.stream);
    expect(text).toContain('gateway_shutting_down');
    expect(text).not.toContain('[DONE]');
    expect(interruptOpenStreams(shuttingDown())).toBe(0);
  });
});
