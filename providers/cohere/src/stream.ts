/**
 * Cohere's chat stream (SSE, one JSON event per frame, named by its `type`) as OpenAI chunks.
 *
 *   message-start      → a first chunk with `role: "assistant"` (the event's `id` becomes every chunk's id)
 *   content-delta      → `content` (a thinking delta → `reasoning_content`, only when strict wire compliance is off)
 *   tool-plan-delta    → `content` (the plan is the text beside tool calls, as in the whole answer)
 *   tool-call-start    → a tool call with its index, id, name and the arguments so far
 *   tool-call-delta    → more `arguments` for that index
 *   message-end        → the finish reason, then (with `stream_options.include_usage`) a usage chunk; the end (the
 *                        usage goes to the core either way, for the completion's tokens and cost)
 *   content-start/end, tool-call-end, citation events, `[DONE]` → nothing
 */
import type { JsonObject, StreamEvent, StreamState, TranslateContext, TranslatedEvent } from '@gateway/sdk';
import { finishReason, usageOf, wantsUsageChunk } from './chat.ts';
import { isObject } from './json.ts';

interface CohereStreamState extends StreamState {
  id?: string;
  /** Cohere's tool-call index → the OpenAI index (calls numbered in the order they start). */
  toolIndex?: Record<string, number>;
}

function chunk(state: CohereStreamState, ctx: TranslateContext, delta: JsonObject, finish: string | null = null): JsonObject {
  return {
    id: state.id ?? 'chatcmpl-cohere',
    object: 'chat.completion.chunk',
    created: ctx.now,
    model: ctx.model ?? '',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** `delta.message` of an event, or an empty object. */
function messageOf(event: JsonObject): JsonObject {
  return isObject(event.delta) && isObject(event.delta.message) ? event.delta.message : {};
}

function toolIndex(state: CohereStreamState, event: JsonObject, start: boolean): number {
  const map = (state.toolIndex ??= {});
  const key = String(event.index ?? 0);
  if (start && map[key] === undefined) map[key] = Object.keys(map).length;
  const index = map[key];
  if (index === undefined) throw new Error(`tool-call-delta for index ${key} before its tool-call-start`);
  return index;
}

export function toChunks(event: StreamEvent, s: StreamState, ctx: TranslateContext): TranslatedEvent {
  const state = s as CohereStreamState;
  const data = event.data.trim();
  if (!data || data === '[DONE]') return { chunks: [] };
  const parsed: unknown = JSON.parse(data);
  if (!isObject(parsed)) throw new Error('a stream event that is not a JSON object');
  const type = typeof parsed.type === 'string' ? parsed.type : event.event;

  switch (type) {
    case 'message-start': {
      if (typeof parsed.id === 'string') state.id = parsed.id;
      return { chunks: [chunk(state, ctx, { role: 'assistant', content: '' })] };
    }
    case 'content-start':
    case 'content-delta': {
      const content = messageOf(parsed).content;
      if (!isObject(content)) return { chunks: [] };
      if (typeof content.text === 'string' && content.text) return { chunks: [chunk(state, ctx, { content: content.text })] };
      if (typeof content.thinking === 'string' && content.thinking && !ctx.strictWireCompliance)
        return { chunks: [chunk(state, ctx, { reasoning_content: content.thinking })] };
      return { chunks: [] };
    }
    case 'tool-plan-delta': {
      const plan = messageOf(parsed).tool_plan;
      return { chunks: typeof plan === 'string' && plan ? [chunk(state, ctx, { content: plan })] : [] };
    }
    case 'tool-call-start': {
      const call = messageOf(parsed).tool_calls;
      if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string')
        throw new Error('tool-call-start without a function name');
      const index = toolIndex(state, parsed, true);
      const args = typeof call.function.arguments === 'string' ? call.function.arguments : '';
      const id = typeof call.id === 'string' ? call.id : `call_${index}`;
      return {
        chunks: [chunk(state, ctx, { tool_calls: [{ index, id, type: 'function', function: { name: call.function.name, arguments: args } }] })],
      };
    }
    case 'tool-call-delta': {
      const call = messageOf(parsed).tool_calls;
      const args = isObject(call) && isObject(call.function) ? call.function.arguments : undefined;
      if (typeof args !== 'string' || !args) return { chunks: [] };
      const index = toolIndex(state, parsed, false);
      return { chunks: [chunk(state, ctx, { tool_calls: [{ index, function: { arguments: args } }] })] };
    }
    case 'message-end': {
      const delta = isObject(parsed.delta) ? parsed.delta : {};
      const finish = finishReason(delta.finish_reason, delta.error);
      const chunks = [chunk(state, ctx, {}, finish)];
      // The usage goes to the core asked for or not (every stream's tokens and cost are known at completion).
      const usage = usageOf(delta.usage);
      if (wantsUsageChunk(ctx)) {
        chunks.push({
          id: state.id ?? 'chatcmpl-cohere',
          object: 'chat.completion.chunk',
          created: ctx.now,
          model: ctx.model ?? '',
          choices: [],
          usage,
        });
      }
      return { chunks, done: true, usage };
    }
    default:
      // content-end, tool-call-end, citation-start/end, debug and events added later carry nothing to relay.
      return { chunks: [] };
  }
}
