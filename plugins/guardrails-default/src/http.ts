/**
 * Outbound HTTP for the checks that call out (webhook, log, jwt's JWKS, inlineImageUrls).
 *
 * - In the gateway, `fetch` is the core's outbound guard (service `hostGuard`, sdk `OutboundGuard`): every URL and
 *   every redirect hop is resolved once, each address checked against private, loopback, link-local and metadata
 *   ranges (TRUSTED_CUSTOM_HOSTS excepted), and the connection goes to the checked address. A refusal is a
 *   `forbidden` error, before any connection.
 * - Only `http:` and `https:` URLs are ever fetched (parameters are validated for it, and every redirect hop is
 *   checked again); `guardUrl`, when given, is asked first (tests, harnesses without the gateway).
 * - POSTs (webhook, log) never follow redirects: a 3xx is a non-2xx answer. GETs (images) follow at most 5.
 * - answers are read with a size cap, and every call has a timeout and follows the client's abort signal.
 */
import { GatewayError, type GuardrailCheckContext, type Json, type JsonObject } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { CheckError } from './check.ts';
import { requestText, responseText } from './text.ts';

/** Rejects (throws) when the URL may not be fetched. */
export type UrlGuard = (url: string) => Promise<void> | void | undefined;

export interface HttpDeps {
  /** The gateway's guarded fetch (OutboundGuard.fetch) in the gateway; tests pass their own. */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  guardUrl?: UrlGuard;
}

/** A failed outbound call. Messages name the host only, never a URL's path or query (they may hold tokens). */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly kind: Exclude<CheckError['kind'], 'invalid_parameters'>,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OutboundError';
  }

  toCheckError(): CheckError {
    return { kind: this.kind, message: this.message, ...(this.status === undefined ? {} : { status: this.status }) };
  }
}

/** Any error as a CheckError (`network` unless it says otherwise). */
export function checkError(error: unknown): CheckError {
  if (error instanceof OutboundError) return error.toCheckError();
  return { kind: 'network', message: error instanceof Error ? error.message : String(error) };
}

/** Schema of a `headers` parameter: an object of strings, or that object as a JSON string (Portkey's UI sends one). */
export const HeadersParam = Type.Union([Type.Record(Type.String(), Type.String()), Type.String()]);

export function parseHeadersParam(value: Record<string, string> | string | undefined): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return {};
  const parsed: unknown = JSON.parse(value);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('headers must be a JSON object of strings');
  for (const v of Object.values(parsed)) if (typeof v !== 'string') throw new Error('headers must be a JSON object of strings');
  return parsed as Record<string, string>;
}

export function headersRule(value: Record<string, string> | string | undefined, name = 'headers'): string[] {
  let parsed: Record<string, string>;
  try {
    parsed = parseHeadersParam(value);
  } catch (error) {
    return [`${name}: ${(error as Error).message}`];
  }
  const violations: string[] = [];
  for (const [key, v] of Object.entries(parsed)) {
    try {
      new Headers([[key, v]]);
    } catch {
      violations.push(`${name}.${key}: is not a valid header`);
    }
  }
  return violations;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** An http(s) URL without credentials in it (send those as headers). */
export function httpUrlRule(value: string, name: string): string[] {
  if (!isHttpUrl(value)) return [`${name}: must be an http or https URL`];
  const url = new URL(value);
  return url.username || url.password ? [`${name}: must not contain credentials (send them in headers)`] : [];
}

async function checkUrl(url: string, deps: HttpDeps): Promise<void> {
  if (!isHttpUrl(url)) throw new OutboundError('refusing to fetch a URL that is not http or https', 'forbidden');
  if (deps.guardUrl) {
    try {
      await deps.guardUrl(url);
    } catch (error) {
      throw new OutboundError(`refusing to fetch ${new URL(url).host}: ${(error as Error).message}`, 'forbidden');
    }
  }
}

/** A signal that aborts after `timeoutMs` or when `parent` aborts. */
export function deadline(timeoutMs: number, parent?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return parent ? AbortSignal.any([timeout, parent]) : timeout;
}

function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number, what: string): OutboundError {
  if (error instanceof OutboundError) return error;
  // The outbound guard refused the host (or the URL) before connecting.
  if (error instanceof GatewayError && error.status === 400) return new OutboundError(`refusing to fetch ${what}: ${error.message}`, 'forbidden');
  if (signal.aborted) {
    const reason = signal.reason as Error | undefined;
    if (reason?.name === 'TimeoutError') return new OutboundError(`${what} timed out after ${timeoutMs} ms`, 'timeout');
    return new OutboundError(`${what} was aborted: the client went away`, 'aborted');
  }
  return new OutboundError(`${what} failed: ${(error as Error)?.message ?? String(error)}`, 'network');
}

export interface GuardedRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** GET only; POSTs never follow redirects. */
  maxRedirects?: number;
  /** Largest answer body read, in bytes. */
  maxBytes: number;
  /** False: the answer's body is discarded unread (`body` is empty). */
  readBody?: boolean;
  /** For error messages: "webhook", "image https://…". */
  what: string;
}

export interface GuardedResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  url: string;
}

/** Reads a body, refusing (and cancelling) one larger than `maxBytes`. */
async function readCapped(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new OutboundError(`${what} is ${declared} bytes, more than the ${maxBytes} allowed`, 'unreadable');
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new OutboundError(`${what} is more than the ${maxBytes} bytes allowed`, 'unreadable');
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** One outbound call under the rules at the top of this file; the whole call (body included) has one timeout. */
export async function guardedFetch(url: string, request: GuardedRequest, deps: HttpDeps): Promise<GuardedResponse> {
  const signal = deadline(request.timeoutMs, request.signal);
  const maxRedirects = request.method === 'GET' ? (request.maxRedirects ?? 5) : 0;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      await checkUrl(current, deps);
      const response = await deps.fetch(current, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal,
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location && request.method === 'GET') {
        await response.body?.cancel().catch(() => {});
        if (hop >= maxRedirects) throw new OutboundError(`${request.what} redirected more than ${maxRedirects} times`, 'network');
        current = new URL(location, current).toString();
        continue;
      }
      if (request.readBody === false) {
        await response.body?.cancel().catch(() => {});
        return { status: response.status, headers: response.headers, body: new Uint8Array(), url: current };
      }
      const body = await readCapped(response, request.maxBytes, request.what);
      return { status: response.status, headers: response.headers, body, url: current };
    }
  } catch (error) {
    throw describeFailure(error, signal, request.timeoutMs, request.what);
  }
}

// ---- what webhook and log send ------------------------------------------------------------------------------

/**
 * The context posted to webhooks and log collectors, in Portkey's shape. Request headers are NOT sent: they carry
 * the caller's gateway and provider keys. Neither is the routing config (it may hold provider credentials).
 */
export function hookPayload(ctx: GuardrailCheckContext): JsonObject {
  const req = ctx.request;
  const body = req.body ?? null;
  const response: JsonObject =
    ctx.phase === 'output'
      ? { json: ctx.responseBody ?? null, text: responseText(ctx.responseBody).text ?? '' }
      : { json: null, text: '' };
  const provider = req.config.provider ?? req.headers.get('x-gateway-provider') ?? null;
  return {
    eventType: ctx.phase === 'input' ? 'beforeRequestHook' : 'afterRequestHook',
    requestType: req.endpoint,
    request: {
      json: body,
      text: requestText(req.body).text ?? '',
      isStreamingRequest: req.body?.stream === true,
      path: req.path,
    },
    response,
    provider: provider as Json,
    metadata: { ...req.metadata },
    traceId: req.traceId,
  };
}
