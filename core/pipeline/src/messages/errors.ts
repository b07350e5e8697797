/**
 * Errors on the Messages routes in Anthropic's shape, `{"type": "error", "error": {"type", "message"}}`, with the
 * type Anthropic gives the same HTTP status (docs/anthropic-messages.md, "Errors").
 */
import type { JsonObject } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function anthropicErrorType(status: number): string {
  return TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

const KNOWN = new Set([...Object.values(TYPES), 'api_error']);

/**
 * An OpenAI/gateway error object (`{message, type, code}`) as Anthropic's `{type, message}`: the type follows the
 * HTTP status as Anthropic's do; inside a stream (no status) a type Anthropic knows is kept, else `api_error`.
 */
export function anthropicErrorOf(error: JsonObject, status?: number): JsonObject {
  const message = typeof error.message === 'string' ? error.message : 'Unknown error';
  if (status !== undefined) return { type: anthropicErrorType(status), message };
  return { type: typeof error.type === 'string' && KNOWN.has(error.type) ? error.type : 'api_error', message };
}

/** Whether a body already is an Anthropic error (a native provider's own answer). */
export function isAnthropicError(body: unknown): boolean {
  return isObject(body) && body.type === 'error' && isObject(body.error);
}

/**
 * The Anthropic error body for a gateway (INTERFACE.md) or OpenAI-shaped error body; undefined for anything else. The
 * gateway's extra top-level properties (`provider`, `hook_results`) stay beside it, as Anthropic's `request_id` does.
 */
export function anthropicErrorBody(body: unknown, status: number): JsonObject | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const { error, type: _type, ...extra } = body;
  return { type: 'error', error: anthropicErrorOf(error, status), ...extra };
}
