/**
 * Anthropic's stream events (decoded from SSE by the core) → OpenAI chat completion chunks.
 *
 * message_start → the role chunk; content_block_start / content_block_delta → text deltas, tool calls (id and name
 * first, then input_json_delta argument pieces at the call's `index`), reasoning_content (thinking, only with
 * strict_wire_compliance false); message_delta → finish reason and usage, kept; message_stop → the finish chunk, the
 * usage chunk when stream_options.include_usage, and `done`. `ping` maps to nothing; an `error` event throws, so the
 * core ends the stream with an error frame. The usage so far goes to the core at message_start, message_delta and
 * message_stop, asked for or not, so that every stream's tokens and cost are known at completion.
 */
import type { JsonObject, StreamEvent, StreamState, TranslateContext, TranslatedEvent } from '@gateway/sdk';
import { anthropicStreamError } from './errors.ts';
import { toFinishReason, toOpenAIUsage } from './response.ts';
import { factsOf, isObject, JSON_TOOL_NAME, num, str } from './shared.ts';

export interface AnthropicStreamOptions {
  /** The provider named in an error frame (`vertex-ai` when Vertex AI hosts the model). */
  provider?: string;
}

type BlockKind = 'text' | 'tool' | 'json' | 'thinking' | 'other';

interface State {
  id: string;
  model: string;
  roleSent: boolean;
  blocks: Map<number, { kind: BlockKind; toolIndex: number }>;
  tools: number;
  usage: JsonObject;
  stopReason: unknown;
}

const KEY = 'anthropic';

function stateOf(store: StreamState, ctx: TranslateContext): State {
  let state = store[KEY] as State | undefined;
  if (!state) {
    state = { id: `chatcmpl-${ctx.now}`, model: ctx.model ?? '', roleSent: false, blocks: new Map(), tools: 0, usage: {}, stopReason: null };
    store[KEY] = state;
  }
  return state;
}

/**
 * Anthropic sends cumulative counts: later values replace earlier ones, missing ones stay. `cache_creation` (the
 * writes by lifetime) is an object of counts, merged the same way.
 */
function mergeUsage(state: State, usage: unknown): void {
  if (!isObject(usage)) return;
  for (const [key, value] of Object.entries(usage)) {
    if (typeof value === 'number') state.usage[key] = value;
    else if (key === 'cache_creation' && isObject(value)) {
      const counts: JsonObject = isObject(state.usage.cache_creation) ? { ...state.usage.cache_creation } : {};
      for (const [k, v] of Object.entries(value)) if (typeof v === 'number') counts[k] = v;
      state.usage.cache_creation = counts;
    }
  }
}

function chunk(state: State, ctx: TranslateContext, delta: JsonObject, finish: string | null = null): JsonObject {
  return {
    id: state.id,
    object: 'chat.completion.chunk',
    created: ctx.now,
    model: state.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** Chunks for one delta, preceded by the role chunk when none was sent yet (a stream without message_start). */
function emit(state: State, ctx: TranslateContext, delta: JsonObject): JsonObject[] {
  if (state.roleSent) return [chunk(state, ctx, delta)];
  state.roleSent = true;
  return [chunk(state, ctx, { role: 'assistant', content: '' }), chunk(state, ctx, delta)];
}

function toolDelta(state: State, ctx: TranslateContext, toolIndex: number, call: JsonObject): JsonObject[] {
  if (factsOf(ctx).legacyFunctions) {
    // Legacy clients know one function call, sent as `function_call` deltas.
    if (toolIndex > 0) return [];
    return emit(state, ctx, { function_call: call.function as JsonObject });
  }
  return emit(state, ctx, { tool_calls: [{ index: toolIndex, ...call }] });
}

/** Maps one decoded Anthropic event to OpenAI chunks. Pure apart from `store`, the per-stream scratch space. */
export function anthropicEventToChunks(
  event: StreamEvent,
  store: StreamState,
  ctx: TranslateContext,
  opts: AnthropicStreamOptions = {},
): TranslatedEvent {
  const data: unknown = JSON.parse(event.data);
  if (!isObject(data)) throw new Error('a stream event is not a JSON object');
  const type = str(data.type) ?? event.event;
  const state = stateOf(store, ctx);

  switch (type) {
    case 'message_start': {
      const message = isObject(data.message) ? data.message : {};
      state.id = str(message.id) ?? state.id;
      state.model = str(message.model) ?? state.model;
      mergeUsage(state, message.usage);
      const usage = toOpenAIUsage(state.usage);
      if (state.roleSent) return { chunks: [], usage };
      state.roleSent = true;
      return { chunks: [chunk(state, ctx, { role: 'assistant', content: '' })], usage };
    }

    case 'content_block_start': {
      const index = num(data.index);
      const block = isObject(data.content_block) ? data.content_block : {};
      if (block.type === 'text') {
        state.blocks.set(index, { kind: 'text', toolIndex: -1 });
        const text = str(block.text);
        return { chunks: text ? emit(state, ctx, { content: text }) : [] };
      }
      if (block.type === 'tool_use') {
        const name = str(block.name) ?? '';
        if (name === JSON_TOOL_NAME) {
          state.blocks.set(index, { kind: 'json', toolIndex: -1 });
          return { chunks: [] };
        }
        const toolIndex = state.tools++;
        state.blocks.set(index, { kind: 'tool', toolIndex });
        return { chunks: toolDelta(state, ctx, toolIndex, { id: str(block.id) ?? `call_${toolIndex}`, type: 'function', function: { name, arguments: '' } }) };
      }
      if (block.type === 'thinking') {
        state.blocks.set(index, { kind: 'thinking', toolIndex: -1 });
        const thinking = str(block.thinking);
        return { chunks: thinking && ctx.strictWireCompliance === false ? emit(state, ctx, { reasoning_content: thinking }) : [] };
      }
      state.blocks.set(index, { kind: 'other', toolIndex: -1 });
      return { chunks: [] };
    }

    case 'content_block_delta': {
      const block = state.blocks.get(num(data.index));
      const delta = isObject(data.delta) ? data.delta : {};
      if (delta.type === 'text_delta') {
        const text = str(delta.text);
        return { chunks: text ? emit(state, ctx, { content: text }) : [] };
      }
      if (delta.type === 'input_json_delta') {
        const part = str(delta.partial_json);
        if (!part || !block) return { chunks: [] };
        if (block.kind === 'json') return { chunks: emit(state, ctx, { content: part }) };
        if (block.kind === 'tool') return { chunks: toolDelta(state, ctx, block.toolIndex, { function: { arguments: part } }) };
        return { chunks: [] };
      }
      if (delta.type === 'thinking_delta') {
        const thinking = str(delta.thinking);
        return { chunks: thinking && ctx.strictWireCompliance === false ? emit(state, ctx, { reasoning_content: thinking }) : [] };
      }
      return { chunks: [] }; // signature_delta, citations_delta and future kinds
    }

    case 'message_delta': {
      const delta = isObject(data.delta) ? data.delta : {};
      if (delta.stop_reason !== undefined && delta.stop_reason !== null) state.stopReason = delta.stop_reason;
      mergeUsage(state, data.usage);
      return { chunks: [], usage: toOpenAIUsage(state.usage) };
    }

    case 'message_stop': {
      let finish = toFinishReason(state.stopReason) ?? 'stop';
      if (finish === 'tool_calls' && state.tools === 0) finish = 'stop'; // only the JSON-mode tool was called
      if (finish === 'tool_calls' && factsOf(ctx).legacyFunctions) finish = 'function_call';
      const chunks: JsonObject[] = state.roleSent ? [] : emit(state, ctx, {}).slice(0, 1);
      chunks.push(chunk(state, ctx, {}, finish));
      const usage = toOpenAIUsage(state.usage);
      if (factsOf(ctx).includeUsage) chunks.push({ ...chunk(state, ctx, {}), choices: [], usage });
      return { chunks, done: true, usage };
    }

    case 'error':
      throw anthropicStreamError(data, opts.provider);

    default:
      return { chunks: [] }; // ping, content_block_stop, and event kinds added later
  }
}
