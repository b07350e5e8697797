import { Errors, type GatewayError, type ProviderErrorInfo } from '@gateway/sdk';

/**
 * Bedrock's error answers: a JSON body `{"message": "..."}` (some AWS front ends spell it `Message`), the exception
 * name in the `x-amzn-errortype` header. The core hands `error()` the body and status only, so the OpenAI-style
 * `type` and `code` come from the status, which Bedrock fixes per exception (documented under "Errors" of each
 * operation): 400 ValidationException, 403 AccessDeniedException, 404 ResourceNotFoundException, 408
 * ModelTimeoutException, 424 ModelErrorException, 429 ThrottlingException / ServiceQuotaExceededException, 500
 * InternalServerException, 503 ServiceUnavailableException / ModelNotReadyException.
 */
const BY_STATUS: Record<number, { type: string; code: string }> = {
  400: { type: 'invalid_request_error', code: 'ValidationException' },
  401: { type: 'authentication_error', code: 'UnrecognizedClientException' },
  403: { type: 'permission_error', code: 'AccessDeniedException' },
  404: { type: 'not_found_error', code: 'ResourceNotFoundException' },
  408: { type: 'timeout_error', code: 'ModelTimeoutException' },
  424: { type: 'api_error', code: 'ModelErrorException' },
  429: { type: 'rate_limit_error', code: 'ThrottlingException' },
  500: { type: 'api_error', code: 'InternalServerException' },
  503: { type: 'api_error', code: 'ServiceUnavailableException' },
};

export function bedrockError(json: unknown, status: number): ProviderErrorInfo | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  const message = typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : undefined;
  if (message === undefined) return undefined;
  const known = BY_STATUS[status];
  // Some front ends put the exception name in the body (`__type`, possibly with a namespace before `#`).
  const named = typeof body.__type === 'string' ? body.__type.split('#').pop()?.split(':')[0] : undefined;
  return { message, type: known?.type ?? 'provider_error', code: named || known?.code || null, param: null };
}

/** Exceptions inside a ConverseStream (`:message-type: exception`), by `:exception-type`, with their HTTP status. */
const STREAM_EXCEPTIONS: Record<string, number> = {
  internalServerException: 500,
  modelStreamErrorException: 424,
  validationException: 400,
  throttlingException: 429,
  serviceUnavailableException: 503,
  modelTimeoutException: 408,
  serviceQuotaExceededException: 429,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
};

export function isStreamException(event: string | undefined): boolean {
  return event !== undefined && /Exception$/.test(event);
}

/** A stream exception as the gateway error the core turns into the closing error frame. */
export function streamExceptionError(event: string, data: string): GatewayError {
  let message = `${event} in the Bedrock stream`;
  try {
    const parsed = JSON.parse(data) as Record<string, unknown>;
    const text = typeof parsed.message === 'string' ? parsed.message : typeof parsed.Message === 'string' ? parsed.Message : undefined;
    if (text) message = text;
  } catch {
    if (data.trim()) message = data.trim().slice(0, 500);
  }
  const status = STREAM_EXCEPTIONS[event] ?? 502;
  const code = event.charAt(0).toUpperCase() + event.slice(1);
  return Errors.provider('bedrock', status, message, BY_STATUS[status]?.type ?? 'provider_error', code);
}
