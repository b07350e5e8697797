// Shared pieces of the resilience (fault-injection) tests: one real gateway process per test file (explicit free
// port, its own SQLite file that survives the process so the request log can be read after SIGTERM), local OpenAI
// mocks that misbehave on cue, official `openai` SDK clients with `maxRetries: 0` (only the gateway retries), and a
// raw SSE reader for checking the exact bytes of a stream.

import { afterAll, beforeAll, expect } from 'bun:test';
import OpenAI, { APIError } from 'openai';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

export const PROVIDER_KEY = 'sk-resilience-provider-key';

export interface ResilienceStack {
  gw: GatewayProcess;
  db: E2EDatabase;
  /** Provider A (index 0) and provider B (index 1). */
  mocks: [OpenAIMock, OpenAIMock];
}

/** A config leaf at a mock (provider `openai`, the mock as custom host), plus any config fields. */
export function leaf(mock: OpenAIMock, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url, ...extra };
}

/** Starts two mocks, a SQLite database and the gateway process for a file; the getter is valid inside its tests. */
export function useResilienceStack(env: Record<string, string> = {}): () => ResilienceStack {
  let stack: ResilienceStack | undefined;
  let stopped = false;
  beforeAll(async () => {
    const db = await createE2EDatabase('sqlite');
    const mocks: [OpenAIMock, OpenAIMock] = [await startOpenAIMock({ apiKey: null }), await startOpenAIMock({ apiKey: null })];
    let gw: GatewayProcess | undefined;
    let lastError: unknown;
    // An explicit free port, as the e2e stack does (several gateways may run at once); retried if it was taken.
    for (let i = 0; i < 3 && !gw; i++) {
      try {
        gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), ...env });
      } catch (error) {
        lastError = error;
      }
    }
    if (!gw) throw lastError;
    const stop = gw.stop;
    gw.stop = () => {
      stopped = true;
      return stop();
    };
    stack = { gw, db, mocks };
  }, 45_000);
  afterAll(async () => {
    if (!stack) return;
    // A gateway that died under a test explains every later failure: show why.
    if (stack.gw.proc.exitCode !== null && !stopped) console.error(`the gateway process exited early (${stack.gw.proc.exitCode}):\n${stack.gw.output().slice(-4000)}`);
    await stack.gw.stop();
    for (const m of stack.mocks) await m.stop();
    await stack.db.drop();
  }, 30_000);
  return () => {
    if (!stack) throw new Error('the resilience stack did not start');
    return stack;
  };
}

/** The last non-streamed JSON answer the client received (status, headers, raw body), for what the SDK hides. */
export interface Recorded {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface Client {
  sdk: OpenAI;
  /** JSON answers (errors included) as received, most recent last. */
  recorded: Recorded[];
  last(): Recorded;
}

/**
 * An OpenAI SDK client at the gateway with a config (object → `x-gateway-config`). `maxRetries: 0`: any retry is the
 * gateway's. JSON answers are copied aside so that tests can read `provider` beside `error`, which the SDK drops.
 */
export function client(gw: GatewayProcess, config: unknown, headers: Record<string, string> = {}): Client {
  const recorded: Recorded[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    if ((res.headers.get('content-type') ?? '').includes('application/json')) {
      const text = await res.clone().text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* kept as text */
      }
      recorded.push({ status: res.status, headers: res.headers, body });
    }
    return res;
  };
  const sdk = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: PROVIDER_KEY,
    maxRetries: 0,
    timeout: 20_000,
    fetch: recordingFetch as unknown as typeof fetch,
    defaultHeaders: { 'x-gateway-api-key': gw.adminKey, 'x-gateway-config': JSON.stringify(config), ...headers },
  });
  return {
    sdk,
    recorded,
    last: () => {
      const r = recorded.at(-1);
      if (!r) throw new Error('no JSON answer was recorded');
      return r;
    },
  };
}

export type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;

export const userMessage = (text: string) => [{ role: 'user' as const, content: text }];

/** Consumes an SDK stream: every chunk it yielded, the joined content, and what it threw (if anything). */
export async function drain(stream: AsyncIterable<ChatChunk>): Promise<{ chunks: ChatChunk[]; text: string; error: unknown; endedAt: number }> {
  const chunks: ChatChunk[] = [];
  let error: unknown;
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (e) {
    error = e;
  }
  return { chunks, text: chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), error, endedAt: performance.now() };
}

/** Calls the gateway with fetch: the raw chat request with a config. */
export function rawChat(gw: GatewayProcess, config: unknown, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gw.adminKey,
      'x-gateway-config': JSON.stringify(config),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

export interface RawSse {
  text: string;
  /** `data:` payloads, in order (an event's data lines joined by \n). */
  data: string[];
  /** Milliseconds from `since` to the moment the body ended. */
  endedAfterMs: number;
}

/** Reads an SSE body to its end and splits it into events. */
export async function readSse(res: Response, since: number): Promise<RawSse> {
  const text = await res.text();
  const endedAfterMs = performance.now() - since;
  const data: string[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const lines = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => (l[5] === ' ' ? l.slice(6) : l.slice(5)));
    if (lines.length) data.push(lines.join('\n'));
  }
  return { text, data, endedAfterMs };
}

/**
 * INTERFACE.md: a stream that broke after its first byte ends with `data: {"error": {…}}` and no `data: [DONE]`.
 * Asserts exactly that shape and returns the error frame's body.
 */
export function expectErrorTail(sse: RawSse): { error: { message: string; type: string; code: string | null; param: string | null }; provider?: string } {
  expect(sse.data.includes('[DONE]')).toBe(false);
  expect(sse.text).not.toContain('[DONE]');
  expect(sse.data.length).toBeGreaterThan(0);
  const tail = JSON.parse(sse.data.at(-1)!);
  expect(Object.keys(tail)).toContain('error');
  expect(tail.error.message).toBeString();
  expect(tail.error.type).toBeString();
  expect(tail.error.code === null || typeof tail.error.code === 'string').toBe(true);
  expect(tail.error.param === null || typeof tail.error.param === 'string').toBe(true);
  // Nothing but the error frame comes after the cut: it is the very last bytes of the body.
  expect(sse.text.trimEnd().endsWith(`data: ${sse.data.at(-1)}`)).toBe(true);
  return tail;
}

/** Every data frame before the tail is a JSON chat chunk (no malformed bytes slipped through). */
export function chunksBefore(sse: RawSse): ChatChunk[] {
  return sse.data.slice(0, -1).map((d) => JSON.parse(d) as ChatChunk);
}

export const contentOf = (chunks: ChatChunk[]) => chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');

export interface Answer {
  status: number;
  headers: Headers;
  /** The answer's content (joined deltas when streamed). */
  text: string;
  /** Non-streamed answer. */
  completion?: OpenAI.Chat.Completions.ChatCompletion;
  /** Streamed chunks. */
  chunks: ChatChunk[];
  /** An APIError from the SDK: an error status, or an error raised while iterating a stream. */
  error?: unknown;
  ms: number;
}

/**
 * One chat call through the SDK, streamed or not; an error status comes back as an Answer too (with the SDK's
 * APIError), so that every case reads the same way. Anything that is not an APIError is rethrown.
 */
export async function ask(c: Client, stream: boolean, text: string, params: Record<string, unknown> = {}): Promise<Answer> {
  const started = performance.now();
  const body = { model: 'gpt-4o-mini', messages: userMessage(text), ...params };
  try {
    if (stream) {
      const { data, response } = await c.sdk.chat.completions
        .create({ ...body, stream: true } as OpenAI.Chat.ChatCompletionCreateParamsStreaming)
        .withResponse();
      const d = await drain(data);
      return { status: response.status, headers: response.headers, text: d.text, chunks: d.chunks, error: d.error, ms: performance.now() - started };
    }
    const { data, response } = await c.sdk.chat.completions.create(body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming).withResponse();
    return { status: response.status, headers: response.headers, text: data.choices[0]?.message.content ?? '', completion: data, chunks: [], ms: performance.now() - started };
  } catch (error) {
    if (!(error instanceof APIError) || error.status === undefined) throw error;
    return { status: error.status, headers: error.headers as Headers, text: '', chunks: [], error, ms: performance.now() - started };
  }
}

export const MODES = [
  ['non-streaming', false],
  ['streaming', true],
] as const;
