/**
 * `streamGenerateContent?alt=sse` → OpenAI chat chunks. Each SSE event is a whole GenerateContentResponse holding
 * the next piece of each candidate; a function call arrives whole in one part, so it goes out as one tool-call
 * chunk carrying its full arguments. The answer is complete once every candidate reported its finish reason.
 */
import type { Json, JsonObject, StreamEvent, StreamState, StreamTranslator, TranslateContext, TranslatedEvent } from '@gateway/sdk';
import { requestFacts } from './facts.ts';
import { completionId, finishReason, geminiLogprobs, geminiUsage, splitParts, streamError, toolCall, toolCallId } from './response.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

interface GeminiStream {
  id: string;
  base: string;
  model: string;
  /** Candidates whose first chunk (with the role) went out. */
  started: Set<number>;
  /** Tool calls emitted so far per candidate (the next call's index). */
  calls: Map<number, number>;
  finished: Set<number>;
  usage?: JsonObject;
}

function streamOf(state: StreamState, json: JsonObject, ctx: TranslateContext): GeminiStream {
  let s = state.gemini as GeminiStream | undefined;
  if (!s) {
    const id = completionId(json);
    s = {
      id,
      base: id.slice('chatcmpl-'.length),
      model: ctx.model ?? (typeof json.modelVersion === 'string' ? json.modelVersion : ''),
      started: new Set(),
      calls: new Map(),
      finished: new Set(),
    };
    state.gemini = s;
  }
  return s;
}

function chunk(s: GeminiStream, ctx: TranslateContext, choices: JsonObject[]): JsonObject {
  return { id: s.id, object: 'chat.completion.chunk', created: ctx.now, model: s.model, choices };
}

export interface GeminiStreamOptions {
  /** Provider id for errors reported inside the stream. */
  provider: string;
}

/** One decoded SSE event → OpenAI chunks; `done` once every candidate finished. */
export function geminiStreamChunks(
  event: StreamEvent,
  state: StreamState,
  ctx: TranslateContext,
  opts: GeminiStreamOptions,
): TranslatedEvent {
  const data = event.data.trim();
  if (data === '' || data === '[DONE]') return { chunks: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new Error(`malformed stream event: ${data.slice(0, 120)}`);
  }
  const out: JsonObject[] = [];
  let done = false;
  for (const json of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!isObject(json)) throw new Error('a stream event is not a JSON object');
    if (isObject(json.error)) throw streamError(opts.provider, json);
    if (json.candidates !== undefined && !Array.isArray(json.candidates)) throw new Error('candidates is not an array');
    if (json.candidates === undefined && !isObject(json.promptFeedback) && !isObject(json.usageMetadata))
      throw new Error('a stream event without candidates, promptFeedback or usageMetadata');
    const s = streamOf(state, json, ctx);
    const usage = geminiUsage(json.usageMetadata);
    if (usage) s.usage = usage;

    let finishes: JsonObject[] = [];
    const candidates = (json.candidates as Json[] | undefined) ?? [];
    candidates.forEach((c, i) => {
      const candidate = isObject(c) ? c : {};
      const index = typeof candidate.index === 'number' ? candidate.index : i;
      const content = isObject(candidate.content) ? candidate.content : {};
      const { text, thoughts, calls } = splitParts(content.parts);
      const delta: JsonObject = {};
      if (!s.started.has(index)) {
        s.started.add(index);
        delta.role = 'assistant';
      }
      if (text) delta.content = text;
      if (thoughts && !ctx.strictWireCompliance) delta.reasoning_content = thoughts;
      if (calls.length) {
        const first = s.calls.get(index) ?? 0;
        delta.tool_calls = calls.map((part, n) => ({
          index: first + n,
          ...toolCall(part, toolCallId(part.functionCall as JsonObject, s.base, index, first + n)),
        }));
        s.calls.set(index, first + calls.length);
      }
      const logprobs = geminiLogprobs(candidate.logprobsResult);
      if (Object.keys(delta).length) {
        if (delta.role && delta.content === undefined && delta.tool_calls === undefined) delta.content = '';
        out.push(chunk(s, ctx, [{ index, delta, logprobs, finish_reason: null }]));
      }
      if (candidate.finishReason !== undefined && candidate.finishReason !== null && !s.finished.has(index)) {
        s.finished.add(index);
        finishes.push({ index, delta: {}, logprobs: null, finish_reason: finishReason(candidate.finishReason, (s.calls.get(index) ?? 0) > 0) });
      }
    });
    // A prompt blocked before any candidate: the answer ends filtered.
    if (!candidates.length && isObject(json.promptFeedback) && json.promptFeedback.blockReason !== undefined && !s.finished.has(0)) {
      s.finished.add(0);
      s.started.add(0);
      finishes = [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' }];
    }
    for (const f of finishes) out.push(chunk(s, ctx, [f]));

    if (s.finished.size > 0 && [...s.started].every((i) => s.finished.has(i))) {
      done = true;
      const facts = requestFacts(ctx);
      if (s.usage) {
        // The client's include_usage known: OpenAI's own usage chunk, or none. Unknown: usage rides on the last chunk.
        if (facts) {
          if (facts.includeUsage) out.push({ ...chunk(s, ctx, []), usage: s.usage });
        } else if (out.length) (out[out.length - 1] as JsonObject).usage = s.usage;
      }
      break;
    }
  }
  // The usage so far goes to the core asked for or not (every stream's tokens and cost are known at completion).
  const usage = (state.gemini as GeminiStream | undefined)?.usage;
  const result: TranslatedEvent = done ? { chunks: out, done } : { chunks: out };
  if (usage) result.usage = usage;
  return result;
}

/** The stream translator of an endpoint that streams Gemini answers over SSE. */
export function geminiStreamTranslator(provider: string): StreamTranslator {
  return { framing: 'sse', toChunks: (event, state, ctx) => geminiStreamChunks(event, state, ctx, { provider }) };
}
