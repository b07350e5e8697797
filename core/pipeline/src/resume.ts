/**
 * The engine's side of continuing a broken stream (issue #15, docs/streaming.md): what the next attempt sends. With
 * a target whose adapter declares a prefill (`EndpointTranslator.prefill`), the conversation with the partial answer
 * appended as the assistant's message; otherwise, or when the target refuses the prefill, the original request, whose
 * answer the relay takes only if it begins with the text already sent.
 */
import {
  type AttemptContinuation,
  type AttemptResult,
  Errors,
  type GatewayError,
  type JsonObject,
  type ProviderAdapter,
  type TargetConfig,
} from '@gateway/sdk';

export interface Continuing {
  continuation: AttemptContinuation;
  body: JsonObject | undefined;
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The body with the answer's usage asked for, where the provider says it on request: the usage of each attempt is
 * added up (docs/streaming.md), and the continuing stream is rewritten anyway, so the usage chunk is hidden there
 * from a client that did not ask for it.
 */
function withUsage(body: JsonObject, provider: ProviderAdapter): JsonObject {
  const stream = provider.endpoints.chatComplete?.stream;
  if (!stream?.requestsUsage && !stream?.toChunks) return body;
  const options = isObject(body.stream_options) ? body.stream_options : {};
  if (options.include_usage === true) return body;
  return { ...body, stream_options: { ...options, include_usage: true } };
}

/** Regenerating: the original request, whose answer must begin with `sent`. */
export function regenerating(body: JsonObject | undefined, sent: string, provider: ProviderAdapter): Continuing {
  return { continuation: { mode: 'regenerate', sent, prefilled: '' }, body: body && withUsage(body, provider) };
}

/** How a target continues `sent`: with a prefill where its adapter builds one for this model, else regenerating. */
export function continuingAttempt(provider: ProviderAdapter, target: TargetConfig, body: JsonObject | undefined, sent: string): Continuing {
  const prefill = body && sent !== '' ? provider.endpoints.chatComplete?.prefill?.(withUsage(body, provider), sent, target) : undefined;
  if (!prefill) return regenerating(body, sent, provider);
  return { continuation: { mode: 'prefill', sent, prefilled: prefill.prefilled }, body: prefill.body };
}

/** A provider's 400 that refuses the prefill itself (a model without it, a rule about the last message). */
const PREFILL_REFUSAL = /prefill|final assistant|assistant message|last message|continue_final_message|prefix/i;

export function refusesPrefill(result: AttemptResult): boolean {
  return result.status === 400 && PREFILL_REFUSAL.test(result.error?.message ?? '');
}

/** A committed stream that broke, as a failed attempt for the strategies: a 502 `stream_interrupted`. */
export function brokenResult(broken: GatewayError, providerId: string): AttemptResult {
  const error = broken.code === 'stream_interrupted' ? broken : Errors.streamInterrupted(providerId, broken.message);
  return { response: error.toResponse(), status: error.status, providerId, error, settled: Promise.resolve({ body: undefined, error }) };
}
