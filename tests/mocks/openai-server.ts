// A local OpenAI API for end-to-end tests: Bun.serve on 127.0.0.1 and a random port, speaking OpenAI's wire
// format (JSON bodies and headers as the API sends them, SSE streams framed `data: {...}\n\n` and closed by
// `data: [DONE]\n\n`, error bodies with the API's status codes). Every request is recorded, and a test can
// script the next answers: a fixed status and body, a delay before the headers, a stream with delays, a stream
// cut mid-way, no answer at all, or a reset connection.
//
//   const mock = await startOpenAIMock({ apiKey: 'sk-test' });
//   const client = new OpenAI({ baseURL: mock.url, apiKey: 'sk-test' });
//   mock.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '1' } });   // the next request gets a 429
//   mock.setBehavior((req) => (req.path.endsWith('/chat/completions') ? { kind: 'hang' } : undefined));
//   await mock.stop();
//
// Routes (under `basePath`, default `/v1`): GET /models, GET /models/{id}, POST /chat/completions,
// POST /completions, POST /embeddings, POST /moderations, POST /files (multipart), GET /files, GET /files/{id},
// GET /files/{id}/content, DELETE /files/{id}. Anything else: 404 `Invalid URL (METHOD /path)`. The endpoints
// live in openai-routes.ts, the JSON shapes in openai-fixtures.ts.

import { type RecordedRequest as Received, startMockServer } from './harness.ts';
import * as fx from './openai-fixtures.ts';
import { createApi, isObj, type Reply } from './openai-routes.ts';

export { fx as fixtures };

export const MOCK_API_KEY = 'sk-mock-0123456789abcdef';

export interface RecordedRequest extends Received {
  /** the body parsed, when it is JSON */
  json?: unknown;
  receivedAt: number;
  /** set when the client went away before the answer was complete */
  abortedAt?: number;
}

/** One SSE frame of a scripted stream: `{ data }` is sent as `data: <JSON or string>\n\n`, `{ raw }` verbatim. */
export type StreamFrame =
  | { data: unknown; event?: string; delayMs?: number }
  | { raw: string | Uint8Array; delayMs?: number };

/**
 * How a stream ends: `done` sends `data: [DONE]` and ends the body; `close` ends the body without `[DONE]`;
 * `cut` closes the connection abruptly (no terminating chunk); `hang` sends nothing more and never ends.
 */
export type StreamEnd = 'done' | 'close' | 'cut' | 'hang';

export type Behavior =
  /** The mock's normal answer, optionally delayed, slowed or cut short (streams: after `stopAfterChunks` events). */
  | { kind: 'default'; delayMs?: number; chunkDelayMs?: number; stopAfterChunks?: number; end?: Exclude<StreamEnd, 'done'> }
  /** A fixed answer. An object body is sent as JSON; a string or bytes verbatim. `cutAfterBytes` closes the
   *  connection after that many bytes of the body. */
  | { kind: 'respond'; status?: number; body?: unknown; headers?: Record<string, string>; delayMs?: number; cutAfterBytes?: number }
  /** An OpenAI error body; message, type and code default to what the API says for that status. */
  | { kind: 'error'; status: number; message?: string; type?: string; param?: string | null; code?: string | null; headers?: Record<string, string>; delayMs?: number }
  /** A scripted SSE stream. */
  | { kind: 'stream'; frames: StreamFrame[]; status?: number; headers?: Record<string, string>; delayMs?: number; chunkDelayMs?: number; end?: StreamEnd }
  /** Never answer (the request stays open until the client gives up or the mock stops). */
  | { kind: 'hang' }
  /** Close the connection without an answer, after `delayMs`. */
  | { kind: 'reset'; delayMs?: number };

export type BehaviorFn = (req: RecordedRequest, index: number) => Behavior | undefined | void | Promise<Behavior | undefined | void>;

export interface OpenAIMockOptions {
  /** the bearer token expected in `Authorization`; default MOCK_API_KEY; `null` accepts any or none */
  apiKey?: string | null;
  /** default `/v1` */
  basePath?: string;
  /** models served, replacing the default list */
  models?: fx.MockModel[];
  /** 400 for request arguments the API does not know (default true, as the API does) */
  strictParams?: boolean;
  /** milliseconds since the epoch; default Date.now */
  now?: () => number;
  hostname?: string;
  port?: number;
}

export interface OpenAIMock {
  /** base URL including the base path, e.g. `http://127.0.0.1:41234/v1` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** answer every request with this behavior, or ask the function (undefined: the normal answer); null clears */
  setBehavior(fn: BehaviorFn | Behavior | null): void;
  /** one-shot behaviors for the next requests, in order; they come before setBehavior's */
  enqueue(...behaviors: Behavior[]): void;
  /** forget requests, queued behaviors, the behavior function and uploaded files */
  reset(): void;
  /** resolves once at least `count` requests were received */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  stop(): Promise<void>;
}

/** Ready-made frames for `{ kind: 'stream' }`. */
export const frames = {
  /** each value as one `data:` frame */
  data: (...values: unknown[]): StreamFrame[] => values.map((data) => ({ data })),
  /** a chat answer streamed a word at a time, as the mock itself streams it */
  chat(text: string, o: { model?: string; id?: string; created?: number; includeUsage?: boolean; promptTokens?: number } = {}): StreamFrame[] {
    const meta = { id: o.id ?? 'chatcmpl-scripted', created: o.created ?? Math.floor(Date.now() / 1000), model: o.model ?? 'gpt-4o-mini' };
    const usage = fx.chatUsage(o.promptTokens ?? 0, fx.countWords(text));
    return fx.chatChunks(meta, [{ content: text, finish: 'stop' }], { usage, includeUsage: o.includeUsage }).map((data) => ({ data }));
  },
  /** an error event as the API sends one inside a stream */
  error: (message: string, type = 'server_error', code: string | null = null): StreamFrame => ({ data: fx.errorBody({ message, type, code }) }),
};

// ----------------------------------------------------------------------------------------------------------------

const enc = new TextEncoder();
/** Time given to Bun to flush the bytes sent before a `cut`. */
const CUT_SETTLE_MS = 25;
const sleep = (ms: number) => (ms > 0 ? Bun.sleep(ms) : Promise.resolve());

const DEFAULT_ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Bad request.', type: 'invalid_request_error', code: null },
  401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { message: 'You are not allowed to sample from this model', type: 'invalid_request_error', code: null },
  404: { message: 'The requested resource does not exist.', type: 'invalid_request_error', code: null },
  408: { message: 'Request timed out.', type: 'timeout', code: null },
  409: { message: 'Conflict.', type: 'invalid_request_error', code: null },
  422: { message: 'Unprocessable entity.', type: 'invalid_request_error', code: null },
  429: { message: 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', code: 'rate_limit_exceeded' },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  502: { message: 'Bad gateway.', type: 'server_error', code: null },
  503: { message: 'The server is overloaded or not ready yet.', type: 'server_error', code: null },
  504: { message: 'Gateway timeout.', type: 'server_error', code: null },
};

export async function startOpenAIMock(opts: OpenAIMockOptions = {}): Promise<OpenAIMock> {
  const apiKey = opts.apiKey === undefined ? MOCK_API_KEY : opts.apiKey;
  const basePath = (opts.basePath ?? '/v1').replace(/\/+$/, '');
  const ids = new fx.IdSource();
  const api = createApi({ apiKey, basePath, models: opts.models ?? fx.DEFAULT_MODELS, strict: opts.strictParams ?? true, now: opts.now ?? Date.now, ids });

  let queue: Behavior[] = [];
  let behavior: BehaviorFn | null = null;
  let stopped = false;

  // ---- rendering
  function baseHeaders(contentType: string): Record<string, string> {
    return {
      'content-type': contentType,
      'openai-version': '2020-10-01',
      'openai-organization': 'user-mock',
      'openai-processing-ms': '1',
      'x-request-id': ids.requestId(),
    };
  }

  /** A body that sends `parts`, waiting as told, then ends as `end` says. */
  function streamBody(parts: { bytes: Uint8Array; delayMs: number }[], end: StreamEnd, rec: RecordedRequest, signal: AbortSignal): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      async start(c) {
        try {
          for (const p of parts) {
            await sleep(p.delayMs);
            if (signal.aborted || stopped) return;
            c.enqueue(p.bytes);
          }
          if (end === 'done') {
            c.enqueue(enc.encode(fx.SSE_DONE));
            c.close();
          } else if (end === 'close') c.close();
          else if (end === 'cut') {
            // Let Bun write what was enqueued first: an error right away would drop the headers and frames too.
            if (parts.length > 0) await sleep(CUT_SETTLE_MS);
            c.error(); // no argument: Bun drops the connection without logging an error
          }
          // 'hang': neither close nor error
        } catch {
          rec.abortedAt ??= Date.now();
        }
      },
    });
  }

  function render(reply: Reply, b: Extract<Behavior, { kind: 'default' }> | undefined, rec: RecordedRequest, signal: AbortSignal): Response {
    if (reply.type === 'sse') {
      const count = b?.stopAfterChunks ?? reply.events.length;
      const events = reply.events.slice(0, count);
      const end: StreamEnd = count < reply.events.length ? (b?.end ?? 'cut') : reply.noDone ? 'close' : 'done';
      const named = (e: unknown) => (reply.named && isObj(e) && typeof e.type === 'string' ? `event: ${e.type}\n` : '');
      const parts = events.map((e, i) => ({ bytes: enc.encode(named(e) + fx.sseData(e)), delayMs: i === 0 ? 0 : (b?.chunkDelayMs ?? 0) }));
      return new Response(streamBody(parts, end, rec, signal), {
        status: reply.status,
        headers: { ...baseHeaders('text/event-stream; charset=utf-8'), ...reply.headers },
      });
    }
    if (reply.type === 'bytes') {
      return new Response(reply.body, { status: reply.status, headers: { ...baseHeaders(reply.contentType), ...reply.headers } });
    }
    // The API pretty-prints its JSON: two spaces for results, four (and a newline) for errors.
    const isError = reply.status >= 400 && isObj(reply.body) && 'error' in reply.body;
    const text = isError ? `${JSON.stringify(reply.body, null, 4)}\n` : JSON.stringify(reply.body, null, 2);
    return new Response(text, { status: reply.status, headers: { ...baseHeaders('application/json'), ...reply.headers } });
  }

  async function scripted(b: Exclude<Behavior, { kind: 'default' }>, rec: RecordedRequest, signal: AbortSignal): Promise<Response> {
    switch (b.kind) {
      case 'hang':
        return new Promise<Response>(() => {});
      case 'reset':
        await sleep(b.delayMs ?? 0);
        return new Response(new ReadableStream({ start: (c) => c.error() }));
      case 'error': {
        await sleep(b.delayMs ?? 0);
        const d = DEFAULT_ERRORS[b.status] ?? { message: `HTTP ${b.status}`, type: b.status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
        const body = fx.errorBody({ message: b.message ?? d.message, type: b.type ?? d.type, param: b.param ?? null, code: b.code === undefined ? d.code : b.code });
        return render({ type: 'json', status: b.status, body, headers: b.headers }, undefined, rec, signal);
      }
      case 'respond': {
        await sleep(b.delayMs ?? 0);
        const status = b.status ?? 200;
        const isBytes = typeof b.body === 'string' || b.body instanceof Uint8Array;
        const payload = b.body === undefined ? new Uint8Array() : isBytes ? (b.body as string | Uint8Array) : JSON.stringify(b.body, null, 2);
        const headers = { ...baseHeaders(isBytes ? 'text/plain; charset=utf-8' : 'application/json'), ...b.headers };
        if (b.cutAfterBytes !== undefined) {
          const all = typeof payload === 'string' ? enc.encode(payload) : payload;
          return new Response(streamBody([{ bytes: all.slice(0, b.cutAfterBytes), delayMs: 0 }], 'cut', rec, signal), { status, headers });
        }
        return new Response(payload, { status, headers });
      }
      case 'stream': {
        await sleep(b.delayMs ?? 0);
        const parts = b.frames.map((f, i) => {
          const bytes =
            'raw' in f
              ? typeof f.raw === 'string' ? enc.encode(f.raw) : f.raw
              : enc.encode((f.event ? `event: ${f.event}\n` : '') + fx.sseData(f.data));
          return { bytes, delayMs: f.delayMs ?? (i === 0 ? 0 : (b.chunkDelayMs ?? 0)) };
        });
        return new Response(streamBody(parts, b.end ?? 'done', rec, signal), {
          status: b.status ?? 200,
          headers: { ...baseHeaders('text/event-stream; charset=utf-8'), ...b.headers },
        });
      }
    }
  }

  const server = startMockServer<RecordedRequest>({
    hostname: opts.hostname,
    port: opts.port,
    idleTimeout: 0, // `hang` means hang: Bun would otherwise close an idle request after 10 s
    record(recorded) {
      const rec: RecordedRequest = { ...recorded, receivedAt: Date.now() };
      if (rec.body && !(rec.headers['content-type'] ?? '').startsWith('multipart/')) {
        try {
          rec.json = JSON.parse(rec.body);
        } catch {
          /* left undefined: a JSON route answers 400 */
        }
      }
      return rec;
    },
    async handle({ request: req, url, bytes, entry, index }) {
      const rec = entry as RecordedRequest;
      req.signal.addEventListener('abort', () => {
        rec.abortedAt ??= Date.now();
      });

      let b: Behavior | undefined | void = queue.shift();
      if (!b && behavior) b = await behavior(rec, index);
      if (b && b.kind !== 'default') return scripted(b, rec, req.signal);
      await sleep(b?.delayMs ?? 0);
      const reply = await api.route({ method: req.method, url, headers: req.headers, bytes, json: rec.json });
      return render(reply, b ?? undefined, rec, req.signal);
    },
    error(e) {
      const body = fx.errorBody({ message: `mock error: ${e instanceof Error ? e.message : String(e)}`, type: 'server_error' });
      return new Response(`${JSON.stringify(body, null, 4)}\n`, { status: 500, headers: { 'content-type': 'application/json' } });
    },
  });

  const requests = server.requests;
  return {
    url: `${server.url}${basePath}`,
    port: server.port,
    requests,
    setBehavior(fn) {
      behavior = fn === null ? null : typeof fn === 'function' ? fn : () => fn;
    },
    enqueue(...bs) {
      queue.push(...bs);
    },
    reset() {
      requests.length = 0;
      queue = [];
      behavior = null;
      api.resetFiles();
    },
    async waitForRequests(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`openai mock: ${requests.length} of ${count} requests after ${timeoutMs} ms`);
        await Bun.sleep(5);
      }
      return requests;
    },
    async stop() {
      stopped = true;
      await server.stop();
    },
  };
}
