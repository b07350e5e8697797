import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { OpenAiSsePassThrough, type StreamProcessor, TranslatingProcessor } from './processors.ts';
import { relayStream, type StreamEnd } from './relay.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** An upstream body the test drives by hand, which records whether it was cancelled. */
function upstream() {
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const cancelled: unknown[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      ctrl = c;
    },
    cancel(reason) {
      cancelled.push(reason);
    },
  });
  return {
    stream,
    cancelled,
    send: (text: string | Uint8Array) => ctrl.enqueue(typeof text === 'string' ? enc.encode(text) : text),
    close: () => ctrl.close(),
    error: (e: unknown) => ctrl.error(e),
  };
}

/** An upstream that sends the given pieces, one per pull, then ends. */
function fromPieces(pieces: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < pieces.length) {
        const p = pieces[i++] as string | Uint8Array;
        c.enqueue(typeof p === 'string' ? enc.encode(p) : p);
      } else c.close();
    },
  });
}

function relay(body: ReadableStream<Uint8Array>, opts: { processor?: StreamProcessor; idleTimeoutMs?: number; captureLimit?: number } = {}) {
  const ends: StreamEnd[] = [];
  const aborts: unknown[] = [];
  let resolveEnd!: (e: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((r) => (resolveEnd = r));
  const out = relayStream(body, {
    provider: 'acme',
    processor: opts.processor ?? new OpenAiSsePassThrough(),
    captureLimit: opts.captureLimit ?? 1 << 20,
    idleTimeoutMs: opts.idleTimeoutMs ?? 5_000,
    abortUpstream: (reason) => aborts.push(reason),
    onEnd: (end) => {
      ends.push(end);
      resolveEnd(end);
    },
  });
  return { out, ends, aborts, ended };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ chunks: Uint8Array[]; text: string }> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return { chunks, text: dec.decode(Buffer.concat(chunks)) };
}

/** The JSON of the last SSE frame. */
function lastFrame(text: string): unknown {
  const frames = text.split('\n\n').filter(Boolean);
  const last = frames[frames.length - 1] as string;
  expect(last.startsWith('data: ')).toBe(true);
  return JSON.parse(last.slice(6));
}

const CHUNK1 = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n';
const CHUNK2 = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"lo"}}]}\n\n';
const DONE = 'data: [DONE]\n\n';

describe('relayStream: a complete answer', () => {
  test('bytes pass through unchanged and in the same chunks; the end is reported complete', async () => {
    const pieces = [enc.encode(CHUNK1), enc.encode(CHUNK2), enc.encode(DONE)];
    const { out, ends, aborts } = relay(fromPieces(pieces));
    const { chunks, text } = await readAll(out);
    expect(chunks.map((c) => dec.decode(c))).toEqual([CHUNK1, CHUNK2, DONE]);
    expect(text).toBe(CHUNK1 + CHUNK2 + DONE);
    expect(ends).toEqual([{ complete: true, clientAborted: false, body: CHUNK1 + CHUNK2 + DONE }]);
    expect(aborts).toEqual([]);
  });

  test('`[DONE]` split across chunks still counts as the end', async () => {
    const { out, ends } = relay(fromPieces([CHUNK1, 'data: [DO', 'NE]\n', '\n']));
    const { text } = await readAll(out);
    expect(text).toBe(`${CHUNK1}data: [DONE]\n\n`);
    expect(ends[0]?.complete).toBe(true);
    expect(ends[0]?.error).toBeUndefined();
  });

  test('the body kept for the log is capped', async () => {
    const { out, ended } = relay(fromPieces([CHUNK1, DONE]), { captureLimit: 10 });
    await readAll(out);
    expect((await ended).body).toBe(CHUNK1.slice(0, 10));
  });

  test('a translating processor writes its own frames and [DONE]', async () => {
    const processor = new TranslatingProcessor(
      {
        framing: 'ndjson',
        toChunks: (event) => {
          const j = JSON.parse(event.data) as { t?: string; end?: boolean };
          return j.end ? { chunks: [], done: true } : { chunks: [{ t: j.t ?? '' }] };
        },
      },
      { endpoint: 'chatComplete', model: 'm', strictWireCompliance: true, now: 0 },
    );
    const { out, ends } = relay(fromPieces(['{"t":"a"}\n{"t"', ':"b"}\n{"end":true}\n']), { processor });
    const { text } = await readAll(out);
    expect(text).toBe('data: {"t":"a"}\n\ndata: {"t":"b"}\n\ndata: [DONE]\n\n');
    expect(ends[0]?.complete).toBe(true);
  });
});

describe('relayStream: a cut answer', () => {
  test('a stream that ends without [DONE] ends with an error frame and no [DONE]', async () => {
    const { out, ends } = relay(fromPieces([CHUNK1, CHUNK2]));
    const { text } = await readAll(out);
    expect(text.startsWith(CHUNK1 + CHUNK2)).toBe(true);
    expect(text).not.toContain('[DONE]');
    expect(text.endsWith('\n\n')).toBe(true);
    const frame = lastFrame(text) as { error: { code: string; type: string; message: string }; provider: string };
    expect(frame.error.code).toBe('stream_interrupted');
    expect(frame.error.message).toContain('ended without its end marker');
    expect(frame.provider).toBe('acme');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.complete).toBe(false);
    expect(ends[0]?.clientAborted).toBe(false);
    expect(ends[0]?.error).toBeInstanceOf(GatewayError);
    expect(ends[0]?.body).toBe(text); // the log sees what the client saw, error frame included
  });

  test('an empty stream is a cut answer too', async () => {
    const { out, ends } = relay(fromPieces([]));
    const { text } = await readAll(out);
    expect((lastFrame(text) as { error: { code: string } }).error.code).toBe('stream_interrupted');
    expect(ends[0]?.complete).toBe(false);
  });

  test('an upstream error mid-stream becomes an error frame after the bytes already sent', async () => {
    const up = upstream();
    const { out, ends } = relay(up.stream);
    const reading = readAll(out);
    up.send(CHUNK1);
    await Bun.sleep(5);
    up.error(new Error('ECONNRESET: socket hang up'));
    const { text } = await reading;
    expect(text.startsWith(CHUNK1)).toBe(true);
    expect(text).not.toContain('[DONE]');
    const frame = lastFrame(text) as { error: { code: string; message: string } };
    expect(frame.error.code).toBe('stream_interrupted');
    expect(frame.error.message).toContain('socket hang up');
    expect(ends[0]?.complete).toBe(false);
    expect(ends[0]?.error?.code).toBe('stream_interrupted');
  });

  test('a processor that rejects the input aborts the upstream and ends with an error frame', async () => {
    const up = upstream();
    const processor: StreamProcessor = {
      push() {
        throw new Error('bad frame');
      },
      end: () => ({ complete: false }),
      usage: undefined,
    };
    const { out, ends, aborts } = relay(up.stream, { processor });
    const reading = readAll(out);
    up.send('garbage');
    const { text } = await reading;
    const frame = lastFrame(text) as { error: { code: string } };
    expect(frame.error.code).toBe('upstream_invalid_response');
    expect(aborts).toHaveLength(1);
    expect(up.cancelled).toHaveLength(1);
    expect(ends[0]?.complete).toBe(false);
  });

  test('an upstream silent for longer than the idle timeout is stopped and the client gets an error frame', async () => {
    const up = upstream();
    const { out, ends, aborts } = relay(up.stream, { idleTimeoutMs: 60 });
    const started = performance.now();
    const reading = readAll(out);
    up.send(CHUNK1);
    const { text } = await reading;
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(50);
    expect(elapsed).toBeLessThan(2_000);
    expect(text.startsWith(CHUNK1)).toBe(true);
    const frame = lastFrame(text) as { error: { code: string; message: string } };
    expect(frame.error.code).toBe('stream_interrupted');
    expect(frame.error.message).toContain('no data for 60 ms');
    expect(aborts).toHaveLength(1);
    expect(up.cancelled).toHaveLength(1);
    expect(ends[0]?.complete).toBe(false);
  });

  test('the idle timer restarts with every chunk: a slow but steady stream is not cut', async () => {
    const up = upstream();
    const { out, ends } = relay(up.stream, { idleTimeoutMs: 80 });
    const reading = readAll(out);
    for (let i = 0; i < 5; i++) {
      up.send(CHUNK1);
      await Bun.sleep(40);
    }
    up.send(DONE);
    up.close();
    const { text } = await reading;
    expect(text).toBe(CHUNK1.repeat(5) + DONE);
    expect(ends[0]?.complete).toBe(true);
  });
});

describe('relayStream: the client goes away', () => {
  test('cancelling the relayed stream cancels the upstream and aborts the upstream request', async () => {
    const up = upstream();
    const { out, ends, aborts } = relay(up.stream);
    const reader = out.getReader();
    up.send(CHUNK1);
    const first = await reader.read();
    expect(dec.decode(first.value)).toBe(CHUNK1);
    await reader.cancel('client left');
    expect(aborts).toEqual(['client left']);
    expect(up.cancelled).toEqual(['client left']);
    expect(ends).toEqual([{ complete: false, clientAborted: true, error: undefined, body: CHUNK1 }]);
  });

  test('onEnd is called once, even when the client cancels after the end', async () => {
    const { out, ends } = relay(fromPieces([CHUNK1, DONE]));
    const reader = out.getReader();
    while (!(await reader.read()).done);
    await reader.cancel('late').catch(() => {});
    expect(ends).toHaveLength(1);
    expect(ends[0]?.complete).toBe(true);
  });
});
