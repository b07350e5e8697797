// Streams that break are continued, not cut (issue #15), against the real gateway process and providers that break
// on cue (faulty-providers.ts: byte-exact OpenAI and Anthropic SSE). One test per fault, each read twice: through the
// official openai SDK and as the raw SSE wire. Each asserts the exact text the client received, one `[DONE]` (or
// none, with the error frame last), and what the provider servers were asked. Time limits are small config values;
// nothing here measures time.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { jsonColumn, type Row } from '../helpers/e2e-database.ts';
import { type FaultyProvider, openAIError, type Script, startFaultyProvider } from './faulty-providers.ts';
import { type ChatChunk, client, type RawSse, rawChat, readSse, useResilienceStack, userMessage } from './support.ts';

const T = 30_000;
const stack = useResilienceStack();
const gw = () => stack().gw;

/** P: OpenAI wire; Q: OpenAI wire (a second target); C: Anthropic wire. */
let P: FaultyProvider;
let Q: FaultyProvider;
let C: FaultyProvider;
beforeAll(() => {
  P = startFaultyProvider('openai');
  Q = startFaultyProvider('openai');
  C = startFaultyProvider('anthropic');
});
afterAll(async () => {
  for (const s of [P, Q, C]) await s?.stop();
});
beforeEach(() => {
  for (const s of [P, Q, C]) s?.reset();
});

const KEY = 'sk-continuation';
/** OpenAI's own API: no prefill declared, so a break is continued there by regenerating. */
const openai = (p: FaultyProvider, extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: KEY, custom_host: p.base, ...extra });
/** vLLM (an OpenAI-compatible server that continues a trailing assistant message). */
const vllm = (p: FaultyProvider, extra: Record<string, unknown> = {}) => ({ provider: 'vllm', api_key: KEY, custom_host: p.base, ...extra });
const claude = (p: FaultyProvider, extra: Record<string, unknown> = {}) => ({
  provider: 'anthropic',
  api_key: KEY,
  custom_host: p.base,
  override_params: { model: 'claude-sonnet-4-5' },
  ...extra,
});
const fallback = (...targets: Record<string, unknown>[]) => ({ strategy: { mode: 'fallback' }, targets });

const body = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: userMessage('Tell me a story'), stream: true, ...extra });

/** The trace ids of raw calls whose log rows the last describe checks. */
const traces: Record<string, string> = {};

interface Wire {
  sse: RawSse;
  chunks: ChatChunk[];
  text: string;
  headers: Headers;
  /** The last frame when it is the error frame. */
  error?: { error: { code: string | null; message: string } };
}

/** One raw streamed call: the frames parsed, and checked to be chat chunks with at most one [DONE], last. */
async function wire(config: unknown, extra: Record<string, unknown> = {}, trace?: string): Promise<Wire> {
  const res = await rawChat(gw(), config, body(extra), trace ? { 'x-gateway-trace-id': trace } : {});
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const sse = await readSse(res, performance.now());
  const dones = sse.data.filter((d) => d === '[DONE]').length;
  expect(dones).toBeLessThanOrEqual(1);
  if (dones === 1) expect(sse.data.at(-1)).toBe('[DONE]');
  const frames = sse.data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, unknown>);
  const last = frames.at(-1);
  const error = last && 'error' in last ? (last as unknown as Wire['error']) : undefined;
  const chunks = (error ? frames.slice(0, -1) : frames) as unknown as ChatChunk[];
  for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
  return { sse, chunks, text: chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), headers: res.headers, error };
}

/** One answer on the wire: one id, one role, one finish, then one [DONE]. */
function expectOneAnswer(w: Wire, text: string): void {
  expect(w.error).toBeUndefined();
  expect(w.sse.data.at(-1)).toBe('[DONE]');
  expect(w.text).toBe(text);
  expect(new Set(w.chunks.map((c) => c.id)).size).toBe(1);
  expect(w.chunks.filter((c) => c.choices[0]?.delta?.role !== undefined)).toHaveLength(1);
  expect(w.chunks[0]?.choices[0]?.delta?.role).toBe('assistant');
  expect(w.chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
  expect(w.sse.text).not.toContain('GARBAGE');
}

/** One streamed call through the SDK: the joined content, the chunks, and what it threw. */
async function sdk(config: unknown, extra: Record<string, unknown> = {}): Promise<{ text: string; chunks: ChatChunk[]; error: unknown; headers: Headers }> {
  const c = client(gw(), config);
  const { data, response } = await c.sdk.chat.completions
    .create({ ...body(extra), stream: true } as OpenAI.Chat.ChatCompletionCreateParamsStreaming)
    .withResponse();
  const chunks: ChatChunk[] = [];
  let error: unknown;
  try {
    for await (const chunk of data) chunks.push(chunk);
  } catch (e) {
    error = e;
  }
  return { text: chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), chunks, error, headers: response.headers };
}

/** Runs `scenario` through the SDK, then through the raw wire, with the same scripts enqueued before each. */
async function bothWays(scripts: () => void, config: unknown, check: (sdkRun: Awaited<ReturnType<typeof sdk>>, raw: Wire) => void, trace?: string, extra: Record<string, unknown> = {}) {
  scripts();
  const viaSdk = await sdk(config, extra);
  const askedViaSdk = { P: P.bodies(), Q: Q.bodies(), C: C.bodies() };
  for (const s of [P, Q, C]) s.reset();
  scripts();
  const raw = await wire(config, extra, trace);
  // Both clients made the same provider calls.
  expect({ P: P.bodies(), Q: Q.bodies(), C: C.bodies() }).toEqual(askedViaSdk);
  check(viaSdk, raw);
}

const lastMessage = (b: Record<string, unknown>) => (b.messages as Record<string, unknown>[]).at(-1);

describe('a stream that breaks after content reached the client is continued', () => {
  test('cut after 3 tokens, retry on a prefill target (vLLM): the rest is asked for with the partial answer, one answer', async () => {
    const scripts = () => P.enqueue({ pieces: ['The ', 'quick ', 'brown '], end: 'cut' }, { pieces: ['fox ', 'jumps.'], end: 'whole' });
    await bothWays(scripts, vllm(P, { retry: { attempts: 1 } }), (viaSdk, raw) => {
      expect(viaSdk.error).toBeUndefined();
      expect(viaSdk.text).toBe('The quick brown fox jumps.');
      expect(viaSdk.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
      expectOneAnswer(raw, 'The quick brown fox jumps.');
      // The headers went out with the first byte: the target that started the answer.
      expect(raw.headers.get('x-gateway-last-used-option-index')).toBe('config');
      expect(raw.headers.get('x-gateway-retry-attempt-count')).toBe('0');
      const [first, second] = P.bodies();
      expect(P.bodies()).toHaveLength(2);
      expect(lastMessage(first!)).toEqual({ role: 'user', content: 'Tell me a story' });
      expect(lastMessage(second!)).toEqual({ role: 'assistant', content: 'The quick brown ' });
      expect(second!.continue_final_message).toBe(true);
      expect(second!.add_generation_prompt).toBe(false);
    }, (traces.cut = crypto.randomUUID()));
  }, T);

  test('stall past stream_idle_timeout, fallback to Anthropic: prefilled without the trailing space, one answer', async () => {
    const scripts = () => {
      P.enqueue({ pieces: ['Once ', 'upon ', 'a '], end: 'stall' });
      C.enqueue({ pieces: [' time, ', 'the end.'], end: 'whole' });
    };
    const config = fallback(openai(P, { stream_idle_timeout: 300 }), claude(C));
    await bothWays(scripts, config, (viaSdk, raw) => {
      expect(viaSdk.error).toBeUndefined();
      expect(viaSdk.text).toBe('Once upon a time, the end.');
      expectOneAnswer(raw, 'Once upon a time, the end.');
      expect(raw.chunks.every((c) => c.model === 'gpt-4o-mini' && c.id === 'chatcmpl-mock1')).toBe(true);
      expect(P.requests).toHaveLength(1);
      expect(C.requests).toHaveLength(1);
      expect(C.requests[0]!.path).toBe('/v1/messages');
      // Anthropic refuses a prefill that ends in whitespace: the space is left out, and not sent twice.
      expect(lastMessage(C.bodies()[0]!)).toEqual({ role: 'assistant', content: 'Once upon a' });
    });
  }, T);

  test('an invalid event is a break: continued from the valid events (Anthropic both times), usage of both attempts', async () => {
    const scripts = () => C.enqueue({ pieces: ['Alpha ', 'beta '], end: 'invalid' }, { pieces: [' gamma.'], end: 'whole' });
    await bothWays(
      scripts,
      claude(C, { retry: { attempts: 1 } }),
      (viaSdk, raw) => {
        expect(viaSdk.error).toBeUndefined();
        expect(viaSdk.text).toBe('Alpha beta gamma.');
        expectOneAnswer(raw, 'Alpha beta gamma.');
        // Asked for by the client: one usage chunk, the two attempts' tokens added up (11 input tokens each).
        const usages = raw.chunks.filter((c) => c.usage);
        expect(usages).toHaveLength(1);
        expect(usages[0]!.usage!.prompt_tokens).toBe(22);
        expect(usages[0]!.usage!.total_tokens).toBe(usages[0]!.usage!.prompt_tokens + usages[0]!.usage!.completion_tokens);
        expect(C.bodies()).toHaveLength(2);
        expect(lastMessage(C.bodies()[1]!)).toEqual({ role: 'assistant', content: 'Alpha beta' });
      },
      undefined,
      { stream_options: { include_usage: true } },
    );
  }, T);

  test('whole (finish reason and usage) but no [DONE]: finished with one [DONE], as a success, one call', async () => {
    const scripts = () => P.enqueue({ pieces: ['All ', 'here.'], end: 'no-done' });
    await bothWays(scripts, openai(P, { retry: { attempts: 1 } }), (viaSdk, raw) => {
      expect(viaSdk.error).toBeUndefined();
      expect(viaSdk.text).toBe('All here.');
      expectOneAnswer(raw, 'All here.');
      // The gateway asked for the usage (to know the tokens) and hid it from this client, which did not.
      expect(raw.chunks.some((c) => c.usage)).toBe(false);
      expect(P.requests).toHaveLength(1);
    });
  }, T);

  test('ended without a finish: a break, continued (prefill on the retry)', async () => {
    const scripts = () => P.enqueue({ pieces: ['Half ', 'an '], end: 'closed' }, { pieces: ['answer.'], end: 'whole' });
    await bothWays(scripts, vllm(P, { retry: { attempts: 1 } }), (viaSdk, raw) => {
      expect(viaSdk.error).toBeUndefined();
      expect(viaSdk.text).toBe('Half an answer.');
      expectOneAnswer(raw, 'Half an answer.');
      expect(lastMessage(P.bodies()[1]!)).toEqual({ role: 'assistant', content: 'Half an ' });
    });
  }, T);

  test('first token slower than first_token_timeout: the next target answers, nothing of the slow one reaches the client', async () => {
    const scripts = () => {
      P.enqueue({ pieces: ['Too late.'], end: 'whole', firstContentDelayMs: 10_000 });
      Q.enqueue({ pieces: ['Fast ', 'answer.'], end: 'whole' });
    };
    const config = fallback(openai(P, { first_token_timeout: 300 }), openai(Q));
    await bothWays(scripts, config, (viaSdk, raw) => {
      expect(viaSdk.error).toBeUndefined();
      expect(viaSdk.text).toBe('Fast answer.');
      expectOneAnswer(raw, 'Fast answer.');
      expect(raw.chunks.every((c) => c.id === 'chatcmpl-mock1')).toBe(true);
      expect(raw.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
      expect(viaSdk.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
      expect(P.requests).toHaveLength(1);
      expect(Q.requests).toHaveLength(1);
      // Not a continuation: nothing had been sent.
      expect(lastMessage(Q.bodies()[0]!)).toEqual({ role: 'user', content: 'Tell me a story' });
    });
  }, T);

  test('the fallback refuses the prefill (400) and regenerates the same start: the remainder only, one answer', async () => {
    const scripts = () => {
      P.enqueue({ pieces: ['Hello ', 'wor'], end: 'cut' });
      Q.enqueue(openAIError(400, 'continue_final_message is not supported for this model'), { pieces: ['Hello ', 'world', '!'], end: 'whole' });
    };
    await bothWays(
      scripts,
      fallback(openai(P), vllm(Q)),
      (viaSdk, raw) => {
        expect(viaSdk.error).toBeUndefined();
        expect(viaSdk.text).toBe('Hello world!');
        expectOneAnswer(raw, 'Hello world!');
        expect(raw.chunks.every((c) => c.id === 'chatcmpl-mock1')).toBe(true);
        const [prefilled, regenerated] = Q.bodies();
        expect(Q.bodies()).toHaveLength(2);
        expect(lastMessage(prefilled!)).toEqual({ role: 'assistant', content: 'Hello wor' });
        expect(prefilled!.continue_final_message).toBe(true);
        expect(lastMessage(regenerated!)).toEqual({ role: 'user', content: 'Tell me a story' });
        expect(regenerated!.continue_final_message).toBeUndefined();
      },
      (traces.regenerated = crypto.randomUUID()),
    );
  }, T);

  test('the fallback regenerates a different answer: never spliced, the error frame and no [DONE]', async () => {
    const scripts = () => {
      P.enqueue({ pieces: ['Hello ', 'wor'], end: 'cut' });
      Q.enqueue(openAIError(400, 'continue_final_message is not supported for this model'), { pieces: ['Goodbye ', 'moon.'], end: 'whole' });
    };
    await bothWays(scripts, fallback(openai(P), vllm(Q)), (viaSdk, raw) => {
      expect(viaSdk.text).toBe('Hello wor');
      expect(viaSdk.error).toBeInstanceOf(APIError);
      expect(raw.text).toBe('Hello wor');
      expect(raw.sse.data).not.toContain('[DONE]');
      expect(raw.error?.error.code).toBe('stream_interrupted');
      expect(raw.error?.error.message).toContain('differs from the text already sent');
      expect(raw.sse.text).not.toContain('Goodbye');
      expect(Q.bodies()).toHaveLength(2);
    });
  }, T);

  test('nothing left to try: the error frame and no [DONE], as before', async () => {
    const scripts = () => P.enqueue({ pieces: ['Only ', 'this'], end: 'cut' });
    await bothWays(scripts, vllm(P), (viaSdk, raw) => {
      expect(viaSdk.text).toBe('Only this');
      expect(viaSdk.error).toBeInstanceOf(APIError);
      expect(raw.text).toBe('Only this');
      expect(raw.sse.data).not.toContain('[DONE]');
      expect(raw.error?.error.code).toBe('stream_interrupted');
      expect(P.requests).toHaveLength(1);
    });
  }, T);
});

describe('a non-streamed answer cut short or invalid is retried like a 5xx', () => {
  const whole = JSON.stringify({
    id: 'chatcmpl-whole',
    object: 'chat.completion',
    created: 1_750_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Whole answer.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
  const cases: [string, Script][] = [
    ['the connection cut mid-body', { status: 200, body: whole, cutAfterBytes: 40 }],
    ['a body that is not JSON', { status: 200, body: '{"id": "chatcmpl-x", "choices": [oops]}' }],
  ];
  for (const [name, broken] of cases) {
    test(`${name}: the retry's whole answer`, async () => {
      P.enqueue(broken, { status: 200, body: whole });
      const c = client(gw(), openai(P, { retry: { attempts: 1 } }));
      const { data, response } = await c.sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('hi') }).withResponse();
      expect(data.choices[0]?.message.content).toBe('Whole answer.');
      expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
      expect(P.requests).toHaveLength(2);
    }, T);
  }
});

describe('the request log', () => {
  let rows: Row[] = [];
  test('records each attempt, the broken one and how the next continued it', async () => {
    expect(await gw().stop()).toBe(0);
    rows = await stack().db.query('SELECT * FROM request_logs');
    const attemptsOf = (trace: string | undefined) => {
      const row = rows.find((r) => r.trace_id === trace);
      expect(row).toBeDefined();
      return jsonColumn<{ index: string; retry: number; status: number; broken?: boolean; continued?: string; error?: string }[]>(row!.attempts)!;
    };
    const cut = attemptsOf(traces.cut);
    expect(cut.map(({ index, retry, status, broken, continued }) => ({ index, retry, status, broken, continued }))).toEqual([
      { index: 'config', retry: 0, status: 200, broken: true, continued: undefined },
      { index: 'config', retry: 1, status: 200, broken: undefined, continued: 'prefill' },
    ]);
    expect(cut[0]!.error).toContain('broke');
    const regenerated = attemptsOf(traces.regenerated);
    expect(regenerated.map(({ index, status, broken, continued }) => ({ index, status, broken, continued }))).toEqual([
      { index: 'config.targets[0]', status: 200, broken: true, continued: undefined },
      { index: 'config.targets[1]', status: 400, broken: undefined, continued: 'prefill' },
      { index: 'config.targets[1]', status: 200, broken: undefined, continued: 'regenerate' },
    ]);
  }, T);
});
