/** Headers that never travel from a client to a provider: hop-by-hop, the gateway's own, proxies' and credentials. */
const NEVER_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'authorization',
  // Provider credentials in other headers: the adapter sets the target's own, a client's never pass.
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'cookie',
  'forwarded',
  'x-real-ip',
  'proxy-authorization',
  'proxy-connection',
]);

export function isForwardable(name: string): boolean {
  const lower = name.toLowerCase();
  return !NEVER_FORWARDED.has(lower) && !lower.startsWith('x-gateway-') && !lower.startsWith('x-forwarded-');
}

/** Headers of a passthrough call: the client's own, less those above. */
export function passthroughHeaders(incoming: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  incoming.forEach((value, name) => {
    if (isForwardable(name)) out[name] = value;
  });
  return out;
}

/**
 * Config `forward_headers`: named client headers sent to the provider as they are (never the gateway's own; never a
 * header that carried the gateway key: `Authorization` when the call has no `x-gateway-api-key`, `x-api-key` when it
 * has neither of them: docs/clients.md).
 */
export function forwardedHeaders(incoming: Headers, names: readonly string[] | undefined, into: Record<string, string>): void {
  if (!names) return;
  for (const name of names) {
    const lower = name.toLowerCase();
    if (lower.startsWith('x-gateway-') || lower.startsWith('x-forwarded-')) continue;
    if (lower === 'authorization' && !incoming.get('x-gateway-api-key')) continue;
    if (lower === 'x-api-key' && !incoming.get('x-gateway-api-key') && !incoming.has('authorization')) continue;
    const value = incoming.get(lower);
    if (value !== null) into[lower] = value;
  }
}

const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Response headers of a provider answer passed back as is (bytes unchanged, so length and encoding stay). */
export function relayedResponseHeaders(upstream: Headers): Headers {
  const out = new Headers();
  upstream.forEach((value, name) => {
    if (!HOP_BY_HOP_RESPONSE.has(name)) out.append(name, value);
  });
  return out;
}

/** Retry-After-ms or Retry-After (seconds or an HTTP date), in milliseconds. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
