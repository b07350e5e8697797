/**
 * Gemini `generateContent` answer → OpenAI chat completion, and the pieces the stream translator shares with it:
 * finish reasons, usage, tool-call ids, error bodies.
 */
import { Errors, type Json, type JsonObject, type ProviderErrorInfo, type TranslateContext } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Gemini's finish reasons in OpenAI's words. A turn that ends with function calls finishes with `tool_calls`. */
export function finishReason(reason: unknown, hasToolCalls: boolean): string {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'LANGUAGE':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    default:
      // STOP, OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, FINISH_REASON_UNSPECIFIED, …
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

/**
 * usageMetadata → OpenAI usage. Gemini counts thoughts apart from the candidates, OpenAI counts reasoning inside the
 * completion; the cached part is inside the prompt in both.
 */
export function geminiUsage(meta: unknown): JsonObject | undefined {
  if (!isObject(meta)) return undefined;
  const prompt = num(meta.promptTokenCount) + num(meta.toolUsePromptTokenCount);
  const reasoning = num(meta.thoughtsTokenCount);
  const completion = num(meta.candidatesTokenCount) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: num(meta.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** An id for the answer: Gemini's responseId when it sent one, else a random one. */
export function completionId(json: JsonObject): string {
  return `chatcmpl-${typeof json.responseId === 'string' && json.responseId ? json.responseId : randomId()}`;
}

export function randomId(): string {
  return crypto.randomUUID().replace(/-/g, '').slice(0, 24);
}

/**
 * A tool call's id: Gemini's own `functionCall.id` when it sent one; else derived from the answer id, the candidate
 * and the call's position, so one call keeps one id wherever it is reported.
 */
export function toolCallId(call: JsonObject, base: string, candidate: number, position: number): string {
  if (typeof call.id === 'string' && call.id) return call.id;
  return `call_${base}_${candidate}_${position}`;
}

/** A functionCall part as an OpenAI tool call (the thought signature kept where Google's OpenAI layer keeps it). */
export function toolCall(part: JsonObject, id: string): JsonObject {
  const call = part.functionCall as JsonObject;
  const out: JsonObject = {
    id,
    type: 'function',
    function: { name: typeof call.name === 'string' ? call.name : '', arguments: JSON.stringify(isObject(call.args) ? call.args : {}) },
  };
  if (typeof part.thoughtSignature === 'string') out.extra_content = { google: { thought_signature: part.thoughtSignature } };
  return out;
}

function utf8Bytes(token: string): number[] {
  return [...Buffer.from(token, 'utf8')];
}

/** logprobsResult → OpenAI's `logprobs.content`. */
export function geminiLogprobs(result: unknown): JsonObject | null {
  if (!isObject(result) || !Array.isArray(result.chosenCandidates)) return null;
  const top = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  const entry = (c: Json): JsonObject => {
    const o = isObject(c) ? c : {};
    const token = typeof o.token === 'string' ? o.token : '';
    return { token, logprob: num(o.logProbability), bytes: utf8Bytes(token) };
  };
  return {
    content: result.chosenCandidates.map((chosen, i) => {
      const alternatives = isObject(top[i]) && Array.isArray((top[i] as JsonObject).candidates) ? ((top[i] as JsonObject).candidates as Json[]) : [];
      return { ...entry(chosen), top_logprobs: alternatives.map(entry) };
    }),
  };
}

/** Parts of one candidate, sorted into visible text, thoughts and function calls. */
export function splitParts(parts: unknown): { text: string; thoughts: string; calls: JsonObject[] } {
  let text = '';
  let thoughts = '';
  const calls: JsonObject[] = [];
  for (const part of Array.isArray(parts) ? parts : []) {
    if (!isObject(part)) continue;
    if (isObject(part.functionCall)) calls.push(part);
    else if (typeof part.text === 'string') {
      if (part.thought === true) thoughts += part.text;
      else text += part.text;
    }
  }
  return { text, thoughts, calls };
}

function assertAnswer(json: unknown): asserts json is JsonObject {
  if (!isObject(json)) throw new Error('expected a JSON object');
  const candidates = json.candidates;
  if (candidates !== undefined && !Array.isArray(candidates)) throw new Error('candidates is not an array');
  if (candidates === undefined && !isObject(json.promptFeedback) && !isObject(json.usageMetadata))
    throw new Error('no candidates, promptFeedback or usageMetadata: not a generateContent answer');
}

/**
 * The OpenAI chat completion for a Gemini answer. Throws (the core answers 502) when the JSON is not a
 * generateContent answer. Thought summaries are shown only when the config allows extra reasoning output
 * (`strict_wire_compliance` false): as `reasoning_content`, and as `content_blocks` (thinking, then text).
 */
export function fromGeminiResponse(json: unknown, ctx: TranslateContext): JsonObject {
  assertAnswer(json);
  const id = completionId(json);
  const base = id.slice('chatcmpl-'.length);
  const candidates = (json.candidates as Json[] | undefined) ?? [];
  const choices: JsonObject[] = candidates.map((c, i) => {
    const candidate = isObject(c) ? c : {};
    const index = typeof candidate.index === 'number' ? candidate.index : i;
    const content = isObject(candidate.content) ? candidate.content : {};
    const { text, thoughts, calls } = splitParts(content.parts);
    const toolCalls = calls.map((part, n) => toolCall(part, toolCallId(part.functionCall as JsonObject, base, index, n)));
    const message: JsonObject = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (thoughts && !ctx.strictWireCompliance) {
      message.reasoning_content = thoughts;
      message.content_blocks = [{ type: 'thinking', thinking: thoughts }, ...(text ? [{ type: 'text', text }] : [])];
    }
    return {
      index,
      message,
      finish_reason: finishReason(candidate.finishReason, toolCalls.length > 0),
      logprobs: geminiLogprobs(candidate.logprobsResult),
    };
  });
  // A prompt blocked before any candidate was made: one empty, filtered choice.
  if (!choices.length && isObject(json.promptFeedback) && json.promptFeedback.blockReason !== undefined)
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null });
  const out: JsonObject = {
    id,
    object: 'chat.completion',
    created: ctx.now,
    model: ctx.model ?? (typeof json.modelVersion === 'string' ? json.modelVersion : ''),
    choices,
  };
  const usage = geminiUsage(json.usageMetadata);
  if (usage) out.usage = usage;
  return out;
}

const TYPE_BY_STATUS: Record<string, string> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  NOT_FOUND: 'not_found_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
};

/** Google's error body `{error: {code, message, status}}` (also inside a one-element array, as streams send it). */
export function geminiError(json: unknown): ProviderErrorInfo | undefined {
  const body = Array.isArray(json) ? json[0] : json;
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const e = body.error;
  if (typeof e.message !== 'string') return undefined;
  const status = typeof e.status === 'string' ? e.status : undefined;
  return {
    message: e.message,
    type: (status && TYPE_BY_STATUS[status]) || 'provider_error',
    code: status ?? (typeof e.code === 'number' || typeof e.code === 'string' ? String(e.code) : null),
    param: null,
  };
}

/** An error event inside a stream, as the gateway error that ends the stream. */
export function streamError(provider: string, json: JsonObject): Error {
  const info = geminiError(json);
  const e = isObject(json.error) ? json.error : {};
  const status = typeof e.code === 'number' && e.code >= 400 && e.code <= 599 ? e.code : 502;
  return Errors.provider(provider, status, info?.message ?? 'the provider reported an error inside the stream', info?.type, info?.code ?? null);
}
