import { GatewayError, type OutboundGuard, type PluginApi, Services } from '@gateway/sdk';
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

/**
 * What an error answer says, for the client: the service's own message when it sent one as JSON (`error.message`,
 * `error`, `message`: "invalid subscription key", "policy not found"), cut to 200 characters. Never the raw body: an
 * answer that is not such a message is reported by its status only (docs/security.md, Outbound URLs).
 */
function describeErrorBody(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = json.error as { message?: unknown } | string | undefined;
    const message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : json.message;
    if (typeof message === 'string') return message.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 200);
  } catch {
    // not JSON: nothing is echoed
  }
  return '';
}

let hostGuard: OutboundGuard | undefined;

/**
 * Sends every service call of this process through the gateway's outbound guard (service `hostGuard`: the host is
 * resolved once, every address checked, the connection made to the checked one), when the gateway provides it (each
 * guardrail plugin calls this in its setup). Without one (a bare test harness): http/https only.
 */
export function guardHostsWith(api: Pick<PluginApi, 'optional'>): void {
  const service = api.optional(Services.hostGuard);
  hostGuard = typeof service?.fetch === 'function' ? service : undefined;
}

/**
 * POSTs `body` as JSON and parses the JSON answer. A refused host (before any connection), a timeout
 * (`AbortSignal.timeout`), a client that went away, a refused connection, a non-2xx status (redirects are not
 * followed: a 3xx is a non-2xx), an answer over the size cap or one that is not JSON all come back as
 * `{ ok: false, error }`, never as a throw.
 */
export async function postJson(options: CallOptions): Promise<CallResult> {
  const { service, url, timeoutMs, secrets = [] } = options;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const fail = (kind: ServiceErrorKind, message: string, status?: number): CallResult => ({
    ok: false,
    error: { kind, message: redact(message, secrets), ...(status === undefined ? {} : { status }) },
  });
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail('refused', `${service} URL must be http or https`);
  try {
    // The gateway's guard: a URL from a config may not reach internal hosts, and connects to the address it checked.
    const send = hostGuard ? (u: string, init: RequestInit) => (hostGuard as OutboundGuard).fetch(u, init) : fetch;
    const response = await send(url.href, {
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
    if (error instanceof GatewayError && error.status === 400)
      return fail('refused', `${service} at ${url.host} is a private or metadata address that is not trusted`);
    if (timeout.aborted) return fail('timeout', `${service} at ${url.host} did not answer within ${timeoutMs} ms`);
    if (options.signal?.aborted) return fail('aborted', `the client went away before ${service} answered`);
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return fail('network', `${service} at ${url.host} unreachable${typeof code === 'string' ? ` (${code})` : ''}: ${message}`);
  }
}
