/**
 * Anthropic's Messages API on the gateway (docs/anthropic-messages.md): POST /v1/messages and
 * /v1/messages/count_tokens, also under /v1/v1/… — the Anthropic SDK appends `/v1/messages` to its base URL, so a
 * base URL given with `/v1` (as the openai SDK wants it) works as well as one without. Errors on these routes are
 * in Anthropic's shape.
 */
import { anthropicErrorBody, isAnthropicError } from '@gateway/pipeline';
import type { EndpointKind } from '@gateway/sdk';
import { type HandlerDeps, handleGatewayCall } from './gateway-handler.ts';

const ROUTES: Readonly<Record<string, { endpoint: EndpointKind; path: string } | undefined>> = Object.assign(Object.create(null), {
  '/v1/messages': { endpoint: 'messages', path: '/messages' },
  '/v1/messages/count_tokens': { endpoint: 'countTokens', path: '/messages/count_tokens' },
  '/v1/v1/messages': { endpoint: 'messages', path: '/messages' },
  '/v1/v1/messages/count_tokens': { endpoint: 'countTokens', path: '/messages/count_tokens' },
});

/** The Messages route of a POST path, or undefined. */
export function messagesRoute(pathname: string): { endpoint: EndpointKind; path: string } | undefined {
  return ROUTES[pathname];
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A JSON error answer in Anthropic's shape; anything else (successes, a native provider's own errors) unchanged. */
export async function asAnthropicError(response: Response): Promise<Response> {
  if (response.status < 400 || !(response.headers.get('content-type') ?? '').includes('json')) return response;
  const bytes = new Uint8Array(await response.arrayBuffer());
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bytes));
  } catch {
    // Not readable JSON (a compressed native answer): passed on as it came.
    return new Response(bytes, { status: response.status, headers: response.headers });
  }
  const reshaped = isAnthropicError(body) ? undefined : anthropicErrorBody(body, response.status);
  if (!reshaped) return new Response(bytes, { status: response.status, headers: response.headers });
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(JSON.stringify(reshaped), { status: response.status, headers });
}

export async function handleMessagesCall(request: Request, route: { endpoint: EndpointKind; path: string }, search: string, deps: HandlerDeps): Promise<Response> {
  return asAnthropicError(await handleGatewayCall(request, route.endpoint, route.path, search, deps));
}
