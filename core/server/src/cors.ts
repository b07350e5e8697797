import { Errors } from '@gateway/sdk';

type Handle = (request: Request) => Promise<Response>;

const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
/** Response headers a browser script may read: the gateway's own (trace id, provider, retries, cache, limits). */
const EXPOSE_HEADERS =
  'x-gateway-trace-id, x-gateway-provider, x-gateway-last-used-option-index, x-gateway-retry-attempt-count, ' +
  'x-gateway-cache-status, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, ' +
  'x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens';
/** How long a browser may reuse a preflight's answer, in seconds. */
const MAX_AGE = '600';

/**
 * CORS for the data plane and the administration API (CORS_ALLOWED_ORIGINS; none: `handle` is returned unchanged
 * and costs nothing). A preflight is answered here, before any route, so it needs no key: it carries none, and it
 * reveals nothing but the allowed methods. A request from an allowed origin gets Access-Control-Allow-Origin on its
 * answer; one from another origin is served without it, so the browser keeps the answer from the page. Keys travel in
 * headers, never cookies, so credentials are not allowed.
 */
export function withCors(handle: Handle, origins: readonly string[]): Handle {
  if (origins.length === 0) return handle;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  const allows = (origin: string) => any || allowed.has(origin.toLowerCase());

  return async (request) => {
    const origin = request.headers.get('origin');
    if (origin === null) return handle(request);
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      if (!allows(origin)) return Errors.forbidden(`Origin ${origin} is not in CORS_ALLOWED_ORIGINS`).toResponse({ vary: 'Origin' });
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': any ? '*' : origin,
          'access-control-allow-methods': ALLOW_METHODS,
          // Whatever the page asks to send: the gateway's headers, the provider's Authorization, SDKs' own headers.
          'access-control-allow-headers': request.headers.get('access-control-request-headers') ?? '',
          'access-control-max-age': MAX_AGE,
          vary: 'Origin, Access-Control-Request-Headers',
        },
      });
    }
    const response = await handle(request);
    if (!allows(origin)) return response;
    return withHeaders(response, any ? '*' : origin);
  };
}

function withHeaders(response: Response, allowOrigin: string): Response {
  const set = (headers: Headers) => {
    headers.set('access-control-allow-origin', allowOrigin);
    headers.set('access-control-expose-headers', EXPOSE_HEADERS);
    headers.append('vary', 'Origin');
  };
  try {
    set(response.headers);
    return response;
  } catch {
    // A relayed upstream answer may have immutable headers: same body (still streaming), copied headers.
    const copy = new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
    set(copy.headers);
    return copy;
  }
}
