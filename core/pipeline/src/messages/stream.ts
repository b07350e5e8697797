/**
 * An OpenAI chat completions stream (SSE `data:` chunks ending with `[DONE]`, or with the gateway's error frame) →
 * Anthropic Messages stream events, as the Anthropic SDK reads them (docs/anthropic-messages.md, "Streaming"):
 * message_start, ping, content_block_start / content_block_delta (text_delta, thinking_delta, input_json_delta) /
 * content_block_stop for each block in turn, then message_delta (stop_reason, usage) and message_stop; an error
 * frame becomes an `error` event and ends the stream.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { SseDataEvents } from '../streams/sse-lines.ts';
import { anthropicErrorOf } from './errors.ts';
import { messageIdOf, messagesUsageOf, stopReasonOf } from './response.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

type Open = { kind: 'text' | 'thinking' } | { kind: 'tool'; call: number };

export function sseEvent(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Converts one chat stream; feed it text as it arrives, then call `end`. */
export class ChatToMessagesStream {
  /** Splits the chat stream into its events' data; each goes to `onData`. */
  private readonly sse = new SseDataEvents((payload) => this.onData(payload));
  private started = false;
  private finished = false;
  private index = -1;
  private open: Open | undefined;
  /** Tool calls by their chat index → the block index each opened (a late argument piece finds its block). */
  private readonly calls = new Map<number, number>();
  private stopReason: string | undefined;
  private usage: Json | undefined;

  constructor(private readonly model: string | undefined) {}

  /** Messages events for this piece of the chat stream. */
  push(text: string): string {
    return this.sse.push(text);
  }

  /** The events still owed when the chat stream ended (a stream cut before `[DONE]` gets an error event). */
  end(): string {
    let out = this.sse.end();
    if (!this.finished) {
      this.finished = true;
      out += sseEvent('error', { type: 'error', error: { type: 'api_error', message: 'The provider stream ended before the answer was complete' } });
    }
    return out;
  }

  get done(): boolean {
    return this.finished;
  }

  /** One event's data from the chat stream: a chunk, `[DONE]` or the gateway's error frame. */
  private onData(payload: string): string {
    if (this.finished) return '';
    if (payload === '[DONE]') return this.finish();
    let chunk: unknown;
    try {
      chunk = JSON.parse(payload);
    } catch {
      return this.fail({ type: 'api_error', message: `malformed stream chunk: ${payload.slice(0, 120)}` });
    }
    if (!isObject(chunk)) return '';
    if (isObject(chunk.error)) return this.fail(anthropicErrorOf(chunk.error));
    return this.chunk(chunk);
  }

  private start(chunk: JsonObject): string {
    this.started = true;
    const message = {
      id: messageIdOf(chunk.id),
      type: 'message',
      role: 'assistant',
      model: typeof chunk.model === 'string' ? chunk.model : (this.model ?? ''),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Known only at the end (OpenAI streams report usage last): message_delta carries the counts.
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return sseEvent('message_start', { type: 'message_start', message }) + sseEvent('ping', { type: 'ping' });
  }

  private chunk(chunk: JsonObject): string {
    let out = this.started ? '' : this.start(chunk);
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') out += this.append({ kind: 'thinking' }, { type: 'thinking_delta', thinking: reasoning });
    if (typeof delta.content === 'string' && delta.content !== '') out += this.append({ kind: 'text' }, { type: 'text_delta', text: delta.content });
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isObject(call)) out += this.toolPiece(call);
    if (typeof choice.finish_reason === 'string') this.stopReason = stopReasonOf(choice.finish_reason);
    return out;
  }

  /** A delta for a text or thinking block, opening it (and closing the one before) when it is not the open one. */
  private append(kind: { kind: 'text' | 'thinking' }, delta: JsonObject): string {
    let out = '';
    if (this.open?.kind !== kind.kind) {
      out += this.close();
      this.index++;
      this.open = kind;
      const block: JsonObject = kind.kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      out += sseEvent('content_block_start', { type: 'content_block_start', index: this.index, content_block: block });
    }
    return out + sseEvent('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }

  private toolPiece(call: JsonObject): string {
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let blockIndex = this.calls.get(callIndex);
    if (blockIndex === undefined) {
      out += this.close();
      blockIndex = ++this.index;
      this.calls.set(callIndex, blockIndex);
      this.open = { kind: 'tool', call: callIndex };
      const id = typeof call.id === 'string' ? call.id : `toolu_${blockIndex}`;
      out += sseEvent('content_block_start', {
        type: 'content_block_start',
        index: blockIndex,
        content_block: { type: 'tool_use', id, name: typeof fn.name === 'string' ? fn.name : '', input: {} },
      });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '')
      out += sseEvent('content_block_delta', { type: 'content_block_delta', index: blockIndex, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    return out;
  }

  private close(): string {
    if (!this.open) return '';
    this.open = undefined;
    return sseEvent('content_block_stop', { type: 'content_block_stop', index: this.index });
  }

  private finish(): string {
    this.finished = true;
    let out = this.started ? '' : this.start({});
    out += this.close();
    out += sseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null },
      usage: messagesUsageOf(this.usage),
    });
    return out + sseEvent('message_stop', { type: 'message_stop' });
  }

  private fail(error: JsonObject): string {
    this.finished = true;
    return sseEvent('error', { type: 'error', error });
  }
}

/**
 * A whole Messages answer as the events of a stream, for a client that asked to stream from a provider that answered
 * whole (a server that ignores `stream`): the same events a stream of it would have had, each block in one delta.
 */
export function eventsOfMessage(message: JsonObject): string {
  const content = Array.isArray(message.content) ? message.content : [];
  let out = sseEvent('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null } });
  out += sseEvent('ping', { type: 'ping' });
  content.forEach((block, index) => {
    if (!isObject(block)) return;
    const start: JsonObject =
      block.type === 'text' ? { type: 'text', text: '' } : block.type === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { ...block, input: {} };
    const delta: JsonObject =
      block.type === 'text'
        ? { type: 'text_delta', text: block.text ?? '' }
        : block.type === 'thinking'
          ? { type: 'thinking_delta', thinking: block.thinking ?? '' }
          : { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) };
    out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: start });
    out += sseEvent('content_block_delta', { type: 'content_block_delta', index, delta });
    out += sseEvent('content_block_stop', { type: 'content_block_stop', index });
  });
  out += sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason ?? 'end_turn', stop_sequence: null }, usage: message.usage ?? {} });
  return out + sseEvent('message_stop', { type: 'message_stop' });
}
