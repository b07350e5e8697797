/** Validation of the first-class request bodies: compiled schemas first, field-spanning rules after. */
import { Errors, type EndpointKind } from '@gateway/sdk';
import { chatValidator } from './chat.ts';
import { completionsValidator } from './completions.ts';
import { embeddingsValidator } from './embeddings.ts';
import { firstViolation } from './first-violation.ts';
import { countTokensValidator, messagesValidator } from './messages.ts';
import { moderationsValidator } from './moderations.ts';
import { responsesValidator } from './responses.ts';
import type { BodyValidator, Violation } from './types.ts';

export type { ChatCompletionBody } from './chat.ts';
export type { CompletionBody } from './completions.ts';
export type { EmbeddingBody } from './embeddings.ts';
export type { MessagesBody } from './messages.ts';
export type { ModerationBody } from './moderations.ts';
export type { ResponsesBody } from './responses.ts';
export { RESPONSES_TOOL_KINDS } from './responses.ts';
export type { Violation } from './types.ts';
export { ChatCompletionBodySchema } from './chat.ts';
export { CompletionBodySchema } from './completions.ts';
export { EmbeddingBodySchema } from './embeddings.ts';
export { ModerationBodySchema } from './moderations.ts';

/** The endpoints with a body of their own; `proxy` bodies go to the provider unread. */
export type BodyEndpoint = Exclude<EndpointKind, 'proxy' | 'listModels'>;

const VALIDATORS: Readonly<Record<BodyEndpoint, BodyValidator>> = {
  chatComplete: chatValidator,
  complete: completionsValidator,
  embed: embeddingsValidator,
  moderate: moderationsValidator,
  messages: messagesValidator,
  countTokens: countTokensValidator,
  responses: responsesValidator,
};

/** A JSON object as JSON.parse makes it: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Throws `Errors.badRequest("<param>: <reason>", param)` for the first violation, else returns.
 * The valid path is one compiled check plus a few property reads; error details are computed only on failure.
 */
export function validateBody(endpoint: BodyEndpoint, body: unknown): void {
  if (!isJsonObject(body)) throw Errors.badRequest('body: must be a JSON object');
  if (!Object.hasOwn(VALIDATORS, endpoint)) throw Errors.internal(`No body schema for endpoint ${String(endpoint)}`);
  const validator = VALIDATORS[endpoint];
  const violation: Violation | undefined = validator.check.Check(body)
    ? validator.crossCheck(body)
    : firstViolation(validator.check, body);
  if (violation !== undefined) throw Errors.badRequest(`${violation.param}: ${violation.reason}`, violation.param);
}
