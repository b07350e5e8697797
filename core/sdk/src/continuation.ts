/**
 * Streams that break are continued, not cut (issue #15; docs/streaming.md). When a streamed chat answer breaks after
 * content reached the client, the engine asks the next attempt (a retry or a fallback target) for the rest: with the
 * partial answer as a trailing assistant message (a prefill) where the target's adapter declares it can
 * (`EndpointTranslator.prefill`), or by regenerating the answer, whose text is relayed only from where the client's
 * text ends, and only when it begins with exactly that text.
 */
import type { GatewayError } from './errors.ts';
import type { AttemptResult } from './plugin.ts';
import type { JsonObject } from './types.ts';

/** How an attempt continues a broken answer. */
export type ContinuationMode = 'prefill' | 'regenerate';

/** What a continuing attempt is asked for (`Attempt.continuation`). */
export interface AttemptContinuation {
  mode: ContinuationMode;
  /** The answer's text the client already has. */
  sent: string;
  /**
   * The part of `sent` given as the assistant's prefill (prefill mode): all of it, or less where the provider refuses
   * some of it (trailing whitespace); the rest is expected again at the start of the new text. '' when regenerating.
   */
  prefilled: string;
}

/** A prefill request built by an adapter: the body, and how much of the text it holds. */
export interface Prefill {
  body: JsonObject;
  prefilled: string;
}

/** The next attempt after a break, as routed: an answer (its stream to relay) or the failure that ends the search. */
export interface ResumedResult extends AttemptResult {
  index: string;
  retries: number;
  /** How this attempt continues (absent on a failure that called no provider). */
  continuation?: AttemptContinuation;
}

/**
 * Carried by a committed chat stream's result. The engine fills `resume` as the result goes back up the config tree
 * (a retry of the same target, then the following fallback targets); the relay calls it when the stream breaks.
 */
export interface StreamResumption {
  resume?(broken: GatewayError, sent: string): Promise<ResumedResult>;
}

/** Options of `assistantPrefill`, what a provider asks of a prefill beyond the trailing assistant message. */
export interface AssistantPrefillOptions {
  /** The provider refuses a prefill ending in whitespace (Anthropic's rule): the whitespace is left out of it. */
  trimTrailingWhitespace?: boolean;
  /** Extra fields on the assistant message (Mistral's `prefix: true`). */
  message?: JsonObject;
  /** Extra fields on the body (vLLM's `continue_final_message`). */
  body?: JsonObject;
}

/** The body with the partial answer appended as the assistant's message, for a provider that continues it. */
export function assistantPrefill(body: JsonObject, text: string, options: AssistantPrefillOptions = {}): Prefill | undefined {
  const prefilled = options.trimTrailingWhitespace ? text.trimEnd() : text;
  const messages = Array.isArray(body.messages) ? body.messages : undefined;
  if (!messages || prefilled === '') return undefined;
  return {
    body: { ...body, ...options.body, messages: [...messages, { role: 'assistant', content: prefilled, ...options.message }] },
    prefilled,
  };
}
