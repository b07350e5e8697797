/** Anthropic errors: `{"type": "error", "error": {"type": "...", "message": "..."}, "request_id": "..."}`. */
import { Errors, type GatewayError, type ProviderErrorInfo } from '@gateway/sdk';
import { isObject, str } from './shared.ts';

/** The HTTP status Anthropic uses for each error type (for errors that arrive inside a stream, where there is none). */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function statusOfErrorType(type: string | undefined): number {
  return (type !== undefined ? STATUS_OF_TYPE[type] : undefined) ?? 500;
}

/** Maps an Anthropic error body to the gateway's error info, keeping the provider's message and error type. */
export function anthropicErrorInfo(json: unknown, _status?: number): ProviderErrorInfo | undefined {
  if (!isObject(json)) return undefined;
  const error = json.error;
  if (isObject(error) && typeof error.message === 'string') return { message: error.message, type: str(error.type), code: null, param: null };
  if (typeof json.message === 'string') return { message: json.message, type: str(json.type) };
  return undefined;
}

/**
 * An `error` event inside a stream (e.g. `overloaded_error` after the answer began) as the error the core ends the
 * stream with: an SSE error frame carrying the provider's message, no `[DONE]`.
 */
export function anthropicStreamError(data: unknown, provider = 'anthropic'): GatewayError {
  const info = anthropicErrorInfo(data) ?? { message: 'the provider sent an error event' };
  return Errors.provider(provider, statusOfErrorType(info.type), info.message, info.type ?? 'provider_error');
}
