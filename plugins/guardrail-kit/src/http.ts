import type { HostCheck, PluginApi } from '@gateway/sdk';
/**
 * One JSON POST to a guardrail service, with everything that can go wrong turned into a value: the checks return a
 * failed verdict with that value in `data.error` and never throw (see README.md, "Failures").
 */

export type ServiceErrorKind = 'invalid_parameters' | 'refused' | 'timeout' | 'aborted' | 'network' | 'http_status' | 'unreadable';

/** What went wrong calling a service. Safe to show a client: no credentials, no URL path or query. */
export interface ServiceError {
  kind: ServiceErrorKind;
  message: string;
  /** The service's HTTP status, for `http_status`. */
  status?: number;
}

export interface CallOptions {
  /** Names the service in messages, e.g. `policy service`. */
  service: string;
  url: URL;
  headers?: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  /** The client's signal: when the client goes away the call is given up too. */
  signal?: AbortSignal;
  /** Values that must never appear in a message (API keys); replaced by `[redacted]`. */
  secrets?: readonly (string | undefined)[];
  /** Largest answer read, in bytes (default 1 MiB); a larger one is `unreadable`. */
  maxBytes?: number;
}

export type CallResult = { ok: true; status: number; json: unknown } | { ok: false; error: ServiceError };

const DEFAULT_MAX_BYTES = 1024 * 1024;

/** Replaces every secret in `text` by `[redacted]`. */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}

/** Reads a body up to `max` bytes; undefined when it is larger. Gives up when `signal` aborts. */
async function readCapped(response: Response, max: number, signal: AbortSignal): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        void reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(value);
    }
  } catch (error) {
    void reader.cancel().catch(() => {});
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** A short description of an error answer: the service's own message when it sent one, else the start of the body. */
function describeErrorBody(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = json.error as { message?: unknown } | string | undefined;
    const message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : json.message;
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim().slice(0, 200);
}

/**
 * POSTs `body` as JSON and parses the JSON answer. A timeout (`AbortSignal.timeout`), a client that went away, a
 * refused connection, a non-2xx status (redirects are not followed: a 3xx is a non-2xx), an answer over the size cap
 * or one that is not JSON all come back as `{ ok: false, error }`, never as a throw.
 */
let hostGuard: HostCheck | undefined;

/**
 * Guards every service call of this process with the gateway's `hostGuard` service, when the gateway provides one
 * (each guardrail plugin calls this in its setup).
 */
export function guardHostsWith(api: Pick<PluginApi, 'service'>): void {
  try {
    hostGuard = api.service<HostCheck>('hostGuard');
  } catch {
    hostGuard = undefined; // no guard provided (a bare test harness): http/https only
  }
}

export async function postJson(options: CallOptions): Promise<CallResult> {
  const { service, url, timeoutMs, secrets = [] } = options;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const fail = (kind: ServiceErrorKind, message: string, status?: number): CallResult => ({
    ok: false,
    error: { kind, message: redact(message, secrets), ...(status === undefined ? {} : { status }) },
  });
  // The gateway's private-address guard, before any connection: a URL from a config may not reach internal hosts.
  try {
    const pending = hostGuard?.check(url.href);
    if (pending) await pending;
  } catch {
    return fail('refused', `${service} at ${url.host} is a private or metadata address that is not trusted`);
  }
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
      body: JSON.stringify(options.body),
      signal,
      redirect: 'manual',
    });
    const text = await readCapped(response, options.maxBytes ?? DEFAULT_MAX_BYTES, signal);
    if (response.status < 200 || response.status > 299) {
      const detail = text ? describeErrorBody(text) : '';
      return fail('http_status', `${service} at ${url.host} answered ${response.status}${detail ? `: ${detail}` : ''}`, response.status);
    }
    if (text === undefined) return fail('unreadable', `${service} at ${url.host} sent an answer larger than ${options.maxBytes ?? DEFAULT_MAX_BYTES} bytes`);
    try {
      return { ok: true, status: response.status, json: JSON.parse(text) as unknown };
    } catch {
      return fail('unreadable', `${service} at ${url.host} sent an answer that is not JSON`);
    }
  } catch (error) {
    if (timeout.aborted) return fail('timeout', `${service} at ${url.host} did not answer within ${timeoutMs} ms`);
    if (options.signal?.aborted) return fail('aborted', `the client went away before ${service} answered`);
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return fail('network', `${service} at ${url.host} unreachable${typeof code === 'string' ? ` (${code})` : ''}: ${message}`);
  }
}
