/**
 * What the local provider, token and secret-manager servers share, so that each of them is only its wire format:
 * listening on a free loopback port, reading each request once (bytes and text) and recording it, and a few small
 * readers and writers (JSON bodies, bearer tokens, SSE answers written in parts). The answers themselves — bodies,
 * headers, status codes, error shapes — stay in each server: they are what the conformance and provider suites
 * check byte for byte.
 *
 *   const server = startMockServer({ handle: ({ url, text }) => Response.json({ path: url.pathname, text }) });
 *   await fetch(`${server.url}/x`, { method: 'POST', body: 'hi' });
 *   server.requests[0]; // { method: 'POST', path: '/x', search: '', headers: {...}, body: 'hi' }
 *   await server.stop();
 */

export type Obj = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A request as a mock server received it. */
export interface RecordedRequest {
  method: string;
  /** pathname, as sent (still percent-encoded) */
  path: string;
  /** the query string with its `?`, or '' */
  search: string;
  /** header names in lower case */
  headers: Record<string, string>;
  /** the body as text (UTF-8, lossy for binary parts) */
  body: string;
}

/** A request, read once: handlers use `bytes` or `text` (the Request's own body is already consumed). */
export interface Incoming<R> {
  request: Request;
  url: URL;
  bytes: Uint8Array;
  text: string;
  /** what `record` kept of this request (undefined when it kept nothing) and its index in `requests` (or -1) */
  entry: R | undefined;
  index: number;
}

export interface MockServerOptions<R> {
  handle(incoming: Incoming<R>): Response | Promise<Response>;
  /** What to keep of each request in `requests` (default: the RecordedRequest itself); undefined keeps nothing. */
  record?: (recorded: RecordedRequest, incoming: Omit<Incoming<R>, 'entry' | 'index'>) => R | undefined;
  /** default 127.0.0.1 */
  hostname?: string;
  /** default 0: a free port */
  port?: number;
  /** Bun closes a request idle this long (s); 0 never does (a mock that hangs on purpose) */
  idleTimeout?: number;
  /** the answer when `handle` throws (default: Bun's) */
  error?: (error: Error) => Response;
}

export interface MockServer<R = RecordedRequest> {
  /** `http://127.0.0.1:<port>`, no trailing slash */
  url: string;
  port: number;
  requests: R[];
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

export function startMockServer<R = RecordedRequest>(options: MockServerOptions<R>): MockServer<R> {
  const requests: R[] = [];
  const record = options.record ?? ((recorded: RecordedRequest) => recorded as R);
  const server = Bun.serve({
    hostname: options.hostname ?? '127.0.0.1',
    port: options.port ?? 0,
    ...(options.idleTimeout !== undefined ? { idleTimeout: options.idleTimeout } : {}),
    ...(options.error ? { error: options.error } : {}),
    async fetch(request) {
      const url = new URL(request.url);
      const bytes = new Uint8Array(await request.arrayBuffer());
      const text = decoder.decode(bytes);
      const read = { request, url, bytes, text };
      const entry = record({ method: request.method, path: url.pathname, search: url.search, headers: Object.fromEntries(request.headers), body: text }, read);
      const index = entry === undefined ? -1 : requests.push(entry) - 1;
      return options.handle({ ...read, entry, index });
    },
  });
  const host = server.hostname === '::' || server.hostname === '0.0.0.0' || !server.hostname ? '127.0.0.1' : server.hostname;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port as number,
    requests,
    stop: () => server.stop(true),
  };
}

/** The parsed body, or undefined when it is not JSON (a server's own error answers that). */
export function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(headers: Headers): string | undefined {
  return /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1];
}

/** A streamed answer written part after part, `delayMs` apart (after each part), then closed. */
export function streamedResponse(parts: (string | Uint8Array)[], headers: Record<string, string>, delayMs = 0): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const part of parts) {
        controller.enqueue(typeof part === 'string' ? encoder.encode(part) : part);
        await Bun.sleep(delayMs);
      }
      controller.close();
    },
  });
  return new Response(body, { headers });
}
