/**
 * ConverseStream events → OpenAI chat completion chunks. The core decodes the `application/vnd.amazon.eventstream`
 * framing (aws-eventstream decoder): each event arrives as `{event: <:event-type>, data: <JSON payload>}`.
 *
 * Events, in order: messageStart {role}; per content block an optional contentBlockStart (tool use: {toolUseId,
 * name}), contentBlockDelta ({text} | {toolUse: {input: <JSON text piece>}} | {reasoningContent: {text}}),
 * contentBlockStop; messageStop {stopReason}; metadata {usage, metrics}. Bedrock pads payloads with a `p` field,
 * which is ignored like any other unknown field. Exceptions (`:message-type: exception`) arrive as events named
 * `…Exception` and end the stream with the provider's message and status.
 *
 * The answer is complete at `metadata` (after `messageStop`): that is when `done` is returned.
 */
import type { JsonObject, StreamEvent, StreamState, TranslateContext, TranslatedEvent } from '@gateway/sdk';
import { completionId, finishReason, JSON_TOOL, usageOf } from './chat.ts';
import { isStreamException, streamExceptionError } from './errors.ts';

interface State {
  id: string;
  /** Content block index → its tool call (OpenAI tool index) or the JSON-mode block. */
  blocks: Map<number, { kind: 'tool'; index: number } | { kind: 'json' }>;
  tools: number;
  json: boolean;
  finish?: string;
  usage?: JsonObject;
  metadata: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function stateOf(raw: StreamState): State {
  if (!raw.bedrock) {
    const fresh: State = { id: completionId(), blocks: new Map(), tools: 0, json: false, metadata: false };
    raw.bedrock = fresh;
  }
  return raw.bedrock as State;
}

function blockIndex(payload: Record<string, unknown>, event: string): number {
  const index = payload.contentBlockIndex;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) throw new Error(`${event} without a contentBlockIndex`);
  return index;
}

export function converseStreamChunks(event: StreamEvent, raw: StreamState, ctx: TranslateContext): TranslatedEvent {
  if (event.event !== undefined && isStreamException(event.event)) throw streamExceptionError(event.event, event.data);
  let payload: unknown;
  try {
    payload = JSON.parse(event.data);
  } catch {
    throw new Error(`ConverseStream ${event.event ?? 'event'} payload is not JSON`);
  }
  if (!isObject(payload)) throw new Error(`ConverseStream ${event.event ?? 'event'} payload is not an object`);
  const state = stateOf(raw);
  const chunk = (delta: JsonObject, finish: string | null = null): JsonObject => ({
    id: state.id,
    object: 'chat.completion.chunk',
    created: ctx.now,
    model: ctx.model ?? '',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const end = (): TranslatedEvent => {
    // What the client asked for: usage only with stream_options.include_usage (always, when the core gave no body).
    const options = ctx.body?.stream_options;
    const includeUsage = ctx.body === undefined || (isObject(options) && options.include_usage === true);
    const chunks: JsonObject[] = [];
    if (includeUsage && state.usage) {
      chunks.push({ id: state.id, object: 'chat.completion.chunk', created: ctx.now, model: ctx.model ?? '', choices: [], usage: state.usage });
    }
    return state.usage ? { chunks, done: true, usage: state.usage } : { chunks, done: true };
  };

  switch (event.event) {
    case 'messageStart':
      return { chunks: [chunk({ role: 'assistant', content: '' })] };

    case 'contentBlockStart': {
      const index = blockIndex(payload, 'contentBlockStart');
      const start = payload.start;
      if (!isObject(start) || !isObject(start.toolUse)) return { chunks: [] };
      const use = start.toolUse;
      if (typeof use.name !== 'string' || typeof use.toolUseId !== 'string') throw new Error('contentBlockStart toolUse lacks name or toolUseId');
      if (use.name === JSON_TOOL) {
        state.blocks.set(index, { kind: 'json' });
        state.json = true;
        return { chunks: [] };
      }
      const toolIndex = state.tools++;
      state.blocks.set(index, { kind: 'tool', index: toolIndex });
      return {
        chunks: [chunk({ tool_calls: [{ index: toolIndex, id: use.toolUseId, type: 'function', function: { name: use.name, arguments: '' } }] })],
      };
    }

    case 'contentBlockDelta': {
      const index = blockIndex(payload, 'contentBlockDelta');
      const delta = payload.delta;
      if (!isObject(delta)) throw new Error('contentBlockDelta without a delta');
      if (typeof delta.text === 'string') return { chunks: delta.text ? [chunk({ content: delta.text })] : [] };
      if (isObject(delta.toolUse)) {
        const input = delta.toolUse.input;
        if (typeof input !== 'string') throw new Error('contentBlockDelta toolUse.input is not a string');
        const block = state.blocks.get(index);
        if (!block) throw new Error(`tool input for content block ${index}, which never started`);
        if (!input) return { chunks: [] };
        if (block.kind === 'json') return { chunks: [chunk({ content: input })] };
        return { chunks: [chunk({ tool_calls: [{ index: block.index, function: { arguments: input } }] })] };
      }
      if (isObject(delta.reasoningContent)) {
        const text = delta.reasoningContent.text;
        if (typeof text === 'string' && text && !ctx.strictWireCompliance) return { chunks: [chunk({ reasoning_content: text })] };
        return { chunks: [] };
      }
      return { chunks: [] };
    }

    case 'messageStop': {
      if (typeof payload.stopReason !== 'string') throw new Error('messageStop without a stopReason');
      state.finish = finishReason(payload.stopReason, state.json && state.tools === 0);
      const finished = chunk({}, state.finish);
      if (!state.metadata) return { chunks: [finished] };
      const rest = end();
      return { chunks: [finished, ...rest.chunks], done: true };
    }

    case 'metadata': {
      if (payload.usage !== undefined) state.usage = usageOf(payload.usage);
      state.metadata = true;
      // The usage goes to the core asked for or not (every stream's tokens and cost are known at completion).
      if (state.finish) return end();
      return state.usage ? { chunks: [], usage: state.usage } : { chunks: [] };
    }

    default:
      // contentBlockStop, and events added later.
      return { chunks: [] };
  }
}
