// Fault injection, part 2: streams that misbehave (slow, cut, stalled, malformed, unterminated, failing before their
// first byte) against the real gateway process, run with GATEWAY_STREAM_IDLE_TIMEOUT_MS=1000. Each case is read
// twice: with the official OpenAI SDK (which must surface an error rather than end cleanly on a broken stream) and
// with fetch, to check the exact SSE bytes: INTERFACE.md says a stream that breaks after its first byte ends with
// `data: {"error": {…}}` and no `data: [DONE]`.

import { beforeEach, describe, expect, test } from 'bun:test';
import { APIError } from 'openai';
import { type Behavior, frames, type StreamFrame } from '../mocks/openai-server.ts';
import { ask, type ChatChunk, chunksBefore, client, contentOf, expectErrorTail, leaf, rawChat, readSse, useResilienceStack, userMessage } from './support.ts';

const T = 15_000;
const IDLE_MS = 1_000;
const stack = useResilienceStack({ GATEWAY_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) });

beforeEach(() => {
  for (const m of stack().mocks) m.reset();
});

const A = () => stack().mocks[0];
const gw = () => stack().gw;
const streamBody = (text: string) => ({ model: 'gpt-4o-mini', messages: userMessage(text), stream: true });

/** Parses the frames of a clean stream: every data frame is JSON, then exactly one `[DONE]`, last. */
function expectCleanStream(data: string[]): ChatChunk[] {
  expect(data.at(-1)).toBe('[DONE]');
  expect(data.filter((d) => d === '[DONE]')).toHaveLength(1);
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as ChatChunk);
  expect(chunks.some((c) => 'error' in c)).toBe(false);
  return chunks;
}

/** A scripted chat stream with `frame` inserted before frame `at`. */
function withFrameAt(text: string, at: number, frame: StreamFrame): StreamFrame[] {
  const all = frames.chat(text);
  return [...all.slice(0, at), frame, ...all.slice(at)];
}

/** Waits until the mock saw its request to `i` aborted by the gateway (or gives up after `ms`). */
async function abortedAt(i: number, ms = 1_000): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  while (A().requests[i]?.abortedAt === undefined && Date.now() < deadline) await Bun.sleep(10);
  return A().requests[i]?.abortedAt;
}

describe('slow but healthy', () => {
  test('first chunk after 800 ms: the SDK gets the whole answer, nothing lost', async () => {
    const text = 'slow but whole answer';
    const scripted = frames.chat(text);
    scripted[0] = { ...scripted[0]!, delayMs: 800 };
    A().enqueue({ kind: 'stream', frames: scripted });
    const a = await ask(client(gw(), leaf(A())), true, 'x');
    expect(a.error).toBeUndefined();
    expect(a.status).toBe(200);
    expect(a.text).toBe(text);
    expect(a.chunks).toHaveLength(scripted.length);
    expect(a.chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(a.ms).toBeGreaterThanOrEqual(790);
  }, T);

  test('first chunk after 800 ms, raw bytes: every frame, one [DONE]', async () => {
    const text = 'slow raw answer';
    const scripted = frames.chat(text);
    scripted[0] = { ...scripted[0]!, delayMs: 800 };
    A().enqueue({ kind: 'stream', frames: scripted });
    const started = performance.now();
    const res = await rawChat(gw(), leaf(A()), streamBody('x'));
    expect(res.status).toBe(200);
    const sse = await readSse(res, started);
    const chunks = expectCleanStream(sse.data);
    expect(chunks).toEqual(scripted.map((f) => (f as { data: ChatChunk }).data));
    expect(sse.endedAfterMs).toBeGreaterThanOrEqual(790);
  }, T);

  test('non-streamed answer after 800 ms', async () => {
    A().enqueue({ kind: 'default', delayMs: 800 });
    const a = await ask(client(gw(), leaf(A())), false, 'take your time');
    expect(a.status).toBe(200);
    expect(a.text).toBe('You said: take your time');
    expect(a.ms).toBeGreaterThanOrEqual(790);
  }, T);

  test('time to first token longer than the idle timeout is bounded by request_timeout, not the idle timeout', async () => {
    const text = 'thinking hard first';
    const scripted = frames.chat(text);
    scripted[0] = { ...scripted[0]!, delayMs: IDLE_MS + 500 };
    A().enqueue({ kind: 'stream', frames: scripted });
    const a = await ask(client(gw(), leaf(A())), true, 'x');
    expect(a.error).toBeUndefined();
    expect(a.text).toBe(text);
  }, T);

  test('gaps of 700 ms between chunks (under the idle timeout): the whole answer', async () => {
    A().enqueue({ kind: 'default', chunkDelayMs: 700 });
    const a = await ask(client(gw(), leaf(A())), true, 'slow');
    expect(a.error).toBeUndefined();
    expect(a.text).toBe('You said: slow');
    expect(a.ms).toBeGreaterThanOrEqual(700 * (a.chunks.length - 1) - 100);
  }, T);
});

describe('stream cut mid-answer (connection dropped after some chunks), with retries left', () => {
  const config = () => leaf(A(), { retry: { attempts: 2 } });

  // Issue #15: the committed stream is continued by the retry. `openai` declares no prefill, so the retry regenerates
  // the answer, and the mock's answer is the same again: the client gets the rest of it (continuation.test.ts has
  // every fault; a stream with nothing left to try still ends with the error frame there).
  test('SDK: the whole answer, no error; the retry regenerated it', async () => {
    A().enqueue({ kind: 'default', stopAfterChunks: 3, end: 'cut' });
    const a = await ask(client(gw(), config()), true, 'one two three four five');
    expect(a.status).toBe(200);
    expect(a.error).toBeUndefined();
    expect(a.text).toBe('You said: one two three four five');
    expect(A().requests).toHaveLength(2);
  }, T);

  test('raw: one answer and one [DONE], no error frame', async () => {
    A().enqueue({ kind: 'default', stopAfterChunks: 3, end: 'cut' });
    const res = await rawChat(gw(), config(), streamBody('one two three four five'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const sse = await readSse(res, performance.now());
    const chunks = expectCleanStream(sse.data);
    expect(contentOf(chunks)).toBe('You said: one two three four five');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  }, T);
});

describe(`stream stall (chunks, then silence) with GATEWAY_STREAM_IDLE_TIMEOUT_MS=${IDLE_MS}`, () => {
  test('SDK: an APIError within ~1–3 s, the upstream call abandoned', async () => {
    A().enqueue({ kind: 'default', stopAfterChunks: 2, end: 'hang' });
    const a = await ask(client(gw(), leaf(A())), true, 'and then nothing');
    expect(a.chunks).toHaveLength(2);
    expect(a.error).toBeInstanceOf(APIError);
    expect((a.error as APIError).code).toBe('stream_interrupted');
    expect(a.ms).toBeGreaterThanOrEqual(IDLE_MS - 20);
    expect(a.ms).toBeLessThan(3_000);
    expect(await abortedAt(0)).toBeDefined();
  }, T);

  test('raw: the chunks, the error frame within ~1–3 s, no [DONE]', async () => {
    A().enqueue({ kind: 'default', stopAfterChunks: 2, end: 'hang' });
    const started = performance.now();
    const res = await rawChat(gw(), leaf(A()), streamBody('and then nothing'));
    expect(res.status).toBe(200);
    const sse = await readSse(res, started);
    const tail = expectErrorTail(sse);
    expect(tail.error.code).toBe('stream_interrupted');
    expect(tail.provider).toBe('openai');
    expect(chunksBefore(sse)).toHaveLength(2);
    expect(sse.endedAfterMs).toBeGreaterThanOrEqual(IDLE_MS - 20);
    expect(sse.endedAfterMs).toBeLessThan(3_000);
    expect(await abortedAt(0)).toBeDefined();
  }, T);

  test('raw: chunks, then half an event, then silence: still the error frame within ~1–3 s', async () => {
    const all = frames.chat('half then nothing');
    A().enqueue({ kind: 'stream', frames: [all[0]!, all[1]!, { raw: 'data: {"id":"chatcmpl-scripted","obj', delayMs: 50 }], end: 'hang' });
    const started = performance.now();
    const res = await rawChat(gw(), leaf(A()), streamBody('x'));
    expect(res.status).toBe(200);
    const sse = await Promise.race([readSse(res, started), Bun.sleep(3_500).then(() => null)]);
    if (!sse) await res.body?.cancel().catch(() => {});
    expect({ endedWithin: sse ? '3.5 s' : 'not after 3.5 s: the relay stalled' }).toEqual({ endedWithin: '3.5 s' });
    const tail = expectErrorTail(sse!);
    expect(tail.error.code).toBe('stream_interrupted');
    expect(chunksBefore(sse!)).toHaveLength(2);
    expect(sse!.endedAfterMs).toBeGreaterThanOrEqual(IDLE_MS - 20);
  }, T);
});

describe('malformed chunk (`data: {not json`)', () => {
  // The bad frame comes on its own, a little after the good ones, so that it is a separate read upstream.
  const scripted = () => withFrameAt('good words then garbage', 2, { raw: 'data: {not json\n\n', delayMs: 50 });

  test('SDK: the good chunks, then an APIError (not a JSON SyntaxError: the bad bytes never reached it)', async () => {
    A().enqueue({ kind: 'stream', frames: scripted(), chunkDelayMs: 0 });
    const a = await ask(client(gw(), leaf(A())), true, 'x');
    expect(a.status).toBe(200);
    expect(a.chunks).toHaveLength(2);
    expect(a.error).toBeInstanceOf(APIError);
    expect(a.error).not.toBeInstanceOf(SyntaxError);
    expect((a.error as APIError).code).toBe('upstream_invalid_response');
  }, T);

  test('raw: error frame, no [DONE], the malformed frame not forwarded, the upstream stopped', async () => {
    const all = scripted();
    // More frames after the garbage, slowly: the gateway must stop reading them.
    all[3] = { ...all[3]!, delayMs: 300 };
    A().enqueue({ kind: 'stream', frames: all });
    const res = await rawChat(gw(), leaf(A()), streamBody('x'));
    expect(res.status).toBe(200);
    const sse = await readSse(res, performance.now());
    const tail = expectErrorTail(sse);
    expect(tail.error.code).toBe('upstream_invalid_response');
    expect(tail.provider).toBe('openai');
    // Every frame before the error frame is a JSON chunk (chunksBefore parses them), and the garbage is not a frame.
    const chunks = chunksBefore(sse);
    expect(chunks).toHaveLength(2);
    expect(sse.data).not.toContain('{not json');
    expect(sse.text).not.toMatch(/^data: \{not json/m);
    expect(contentOf(chunks)).toBe('good');
    expect(await abortedAt(0)).toBeDefined();
  }, T);
});

describe('stream without [DONE] (every chunk, then a clean close)', () => {
  const text = 'complete but unterminated';

  test('SDK: every chunk, then an APIError instead of a clean end', async () => {
    A().enqueue({ kind: 'stream', frames: frames.chat(text), end: 'close' });
    const a = await ask(client(gw(), leaf(A())), true, 'x');
    expect(a.status).toBe(200);
    expect(a.text).toBe(text);
    expect(a.error).toBeInstanceOf(APIError);
    expect((a.error as APIError).code).toBe('stream_interrupted');
  }, T);

  test('raw: every chunk, the error frame, no [DONE]', async () => {
    const scripted = frames.chat(text);
    A().enqueue({ kind: 'stream', frames: scripted, end: 'close' });
    const res = await rawChat(gw(), leaf(A()), streamBody('x'));
    const sse = await readSse(res, performance.now());
    const tail = expectErrorTail(sse);
    expect(tail.error.code).toBe('stream_interrupted');
    expect(chunksBefore(sse)).toEqual(scripted.map((f) => (f as { data: ChatChunk }).data));
  }, T);
});

describe('stream that fails before its first byte, with retry: the retry answers, one clean stream', () => {
  const failures: [string, Behavior][] = [
    ['connection reset', { kind: 'reset' }],
    ['200 event-stream, then cut before any byte', { kind: 'stream', frames: [], end: 'cut' }],
    ['200 event-stream, then closed empty', { kind: 'stream', frames: [], end: 'close' }],
  ];

  test.each(failures)('%s — SDK', async (_name, failure) => {
    A().enqueue(failure);
    const a = await ask(client(gw(), leaf(A(), { retry: { attempts: 1 } })), true, 'second stream');
    expect(a.error).toBeUndefined();
    expect(a.status).toBe(200);
    expect(a.text).toBe('You said: second stream');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests).toHaveLength(2);
  }, T);

  test.each(failures)('%s — raw bytes', async (_name, failure) => {
    A().enqueue(failure);
    const res = await rawChat(gw(), leaf(A(), { retry: { attempts: 1 } }), streamBody('second stream'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    const sse = await readSse(res, performance.now());
    const chunks = expectCleanStream(sse.data);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1); // one stream, not pieces of two
    expect(contentOf(chunks)).toBe('You said: second stream');
    expect(A().requests).toHaveLength(2);
  }, T);

  test('without retry but with a fallback target: the fallback streams the answer', async () => {
    A().enqueue({ kind: 'stream', frames: [], end: 'cut' });
    const B = stack().mocks[1];
    const config = { strategy: { mode: 'fallback' }, targets: [leaf(A()), leaf(B)] };
    const a = await ask(client(gw(), config), true, 'from b');
    expect(a.error).toBeUndefined();
    expect(a.text).toBe('You said: from b');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(B.requests).toHaveLength(1);
  }, T);
});

describe('the client goes away: the gateway stops the provider call', () => {
  test('SDK stream broken off after two chunks: the upstream stream is aborted', async () => {
    A().enqueue({ kind: 'default', chunkDelayMs: 150 });
    const stream = await client(gw(), leaf(A())).sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('a b c d e f g h'), stream: true });
    let seen = 0;
    for await (const _chunk of stream) if (++seen === 2) break; // the SDK aborts its request on break
    const at = await abortedAt(0, 1_500);
    expect(at).toBeDefined();
  }, T);

  test('fetch aborted while the provider is silent (not streamed): the upstream request is aborted', async () => {
    A().setBehavior({ kind: 'hang' });
    const ctrl = new AbortController();
    const pending = fetch(`${gw().url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw().adminKey, 'x-gateway-config': JSON.stringify(leaf(A())) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: userMessage('never mind') }),
      signal: ctrl.signal,
    }).catch((e: unknown) => e);
    await A().waitForRequests(1, 3_000);
    ctrl.abort();
    expect(await pending).toBeInstanceOf(Error);
    expect(await abortedAt(0, 1_500)).toBeDefined();
  }, T);
});

describe('a stream whose first byte is later than request_timeout is not committed yet', () => {
  const late = () => {
    const scripted = frames.chat('too late');
    scripted[0] = { ...scripted[0]!, delayMs: 1_500 };
    return { kind: 'stream' as const, frames: scripted };
  };

  test('408 request_timeout (a plain JSON error, not a 200 stream)', async () => {
    A().enqueue(late());
    const started = performance.now();
    const res = await rawChat(gw(), leaf(A(), { request_timeout: 500 }), streamBody('x'));
    expect(res.status).toBe(408);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('request_timeout');
    expect(performance.now() - started).toBeLessThan(1_400);
  }, T);

  test('with a fallback target the fallback streams the answer', async () => {
    A().enqueue(late());
    const B = stack().mocks[1];
    const config = { strategy: { mode: 'fallback' }, targets: [leaf(A(), { request_timeout: 500 }), leaf(B)] };
    const a = await ask(client(gw(), config), true, 'on time');
    expect(a.error).toBeUndefined();
    expect(a.text).toBe('You said: on time');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(a.ms).toBeLessThan(1_400);
  }, T);
});

// An SSE event split across two upstream reads is ordinary TCP behaviour (large events, providers that flush
// `data: ` and the JSON separately). The answer must arrive whole. The reads below give up after 3 s, well past the
// idle timeout, so that a stalled relay fails the test instead of hanging it.
describe('an SSE event split across upstream reads', () => {
  const DEADLINE_MS = 3_000;

  /** Reads the raw body until it ends or DEADLINE_MS passes; `stalled` says which. */
  async function readRaw(res: Response): Promise<{ text: string; data: string[]; stalled: boolean }> {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    const deadline = Bun.sleep(DEADLINE_MS).then(() => 'stalled' as const);
    let text = '';
    for (;;) {
      const r = await Promise.race([reader.read(), deadline]);
      if (r === 'stalled') {
        await reader.cancel().catch(() => {});
        return { text, data: [], stalled: true };
      }
      if (r.done) break;
      text += dec.decode(r.value, { stream: true });
    }
    const data = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    return { text, data, stalled: false };
  }

  const text = 'split across reads';
  const scripted = () => frames.chat(text);
  const frameBytes = (f: StreamFrame) => `data: ${JSON.stringify((f as { data: unknown }).data)}\n\n`;

  const cases: [string, () => StreamFrame[]][] = [
    ['an event cut in two mid-JSON', () => {
      const all = scripted();
      const second = frameBytes(all[1]!);
      return [all[0]!, { raw: second.slice(0, 25), delayMs: 50 }, { raw: second.slice(25), delayMs: 50 }, ...all.slice(2)];
    }],
    ['`data: ` flushed before its JSON', () => {
      const all = scripted();
      return [all[0]!, { raw: 'data: ', delayMs: 50 }, { raw: frameBytes(all[1]!).slice(6), delayMs: 50 }, ...all.slice(2)];
    }],
  ];

  test.each(cases)('%s: raw bytes arrive whole, ending with [DONE]', async (_name, make) => {
    const f = make();
    A().enqueue({ kind: 'stream', frames: f });
    const res = await rawChat(gw(), leaf(A()), streamBody('x'));
    expect(res.status).toBe(200);
    const raw = await readRaw(res);
    expect({ stalled: raw.stalled }).toEqual({ stalled: false });
    const chunks = expectCleanStream(raw.data);
    expect(contentOf(chunks)).toBe(text);
  }, T);

  test.each(cases)('%s: the SDK gets the whole answer', async (_name, make) => {
    A().enqueue({ kind: 'stream', frames: make() });
    const ctrl = new AbortController();
    const stream = await client(gw(), leaf(A())).sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('x'), stream: true }, { signal: ctrl.signal });
    let got = '';
    const outcome = await Promise.race([
      (async () => {
        for await (const chunk of stream) got += chunk.choices[0]?.delta?.content ?? '';
        return 'ended' as const;
      })().catch((e: unknown) => e),
      Bun.sleep(DEADLINE_MS).then(() => 'stalled' as const),
    ]);
    if (outcome === 'stalled') ctrl.abort();
    expect({ outcome, got }).toEqual({ outcome: 'ended', got: text });
  }, T);

  test('one large event (1 MiB of content) arrives whole', async () => {
    const big = 'x'.repeat(1024 * 1024);
    const all = frames.chat('big');
    const chunk = { ...(all[1] as { data: ChatChunk }).data, choices: [{ index: 0, delta: { content: big }, logprobs: null, finish_reason: null }] };
    A().enqueue({ kind: 'stream', frames: [all[0]!, { data: chunk }, all.at(-1)!] });
    const started = performance.now();
    const res = await Promise.race([rawChat(gw(), leaf(A()), streamBody('x')), Bun.sleep(DEADLINE_MS).then(() => null)]);
    expect({ headersWithin: res ? 'time' : `no headers after ${DEADLINE_MS} ms` }).toEqual({ headersWithin: 'time' });
    const raw = await readRaw(res!);
    expect({ stalled: raw.stalled }).toEqual({ stalled: false });
    const chunks = expectCleanStream(raw.data);
    expect(contentOf(chunks)).toBe(big);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
  }, T);
});
