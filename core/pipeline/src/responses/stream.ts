/**
 * An OpenAI chat completions stream (SSE `data:` chunks ending with `[DONE]`, or with the gateway's error frame) →
 * the Responses event stream, as the openai SDK's `responses.stream` reads it (docs/responses.md, "Streaming"):
 * response.created, response.in_progress; per output item in order output_item.added, then for a message
 * content_part.added / output_text.delta… / output_text.done / content_part.done, for a function call
 * function_call_arguments.delta… / .done, for reasoning the summary part and text events, and output_item.done;
 * finally response.completed (or response.incomplete when the answer was cut by max_output_tokens). An error frame,
 * or a stream cut before `[DONE]`, becomes an `error` event then response.failed.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { SseDataEvents } from '../streams/sse-lines.ts';
import { isObject } from './request.ts';
import { functionCallItem, messageItem, newId, type ResponseFrame, reasoningItem, responseObject, responsesUsage, statusOf } from './response.ts';

interface OpenItem {
  kind: 'message' | 'reasoning' | 'function_call';
  index: number;
  id: string;
  text: string;
  callId?: string;
  name?: string;
}

/** Converts one chat stream; feed it text as it arrives, then call `end`. `completed` is the final Response. */
export class ChatToResponsesStream {
  /** Splits the chat stream into its events' data; each goes to `onData`. */
  private readonly sse = new SseDataEvents((payload) => this.onData(payload));
  private started = false;
  private finished = false;
  private sequence = 0;
  private readonly output: JsonObject[] = [];
  /** The message or reasoning item being written; function calls stay open to the end (arguments may interleave). */
  private current: OpenItem | undefined;
  private readonly calls = new Map<number, OpenItem>();
  private finish: Json | undefined;
  private usage: Json | undefined;
  private model: string | undefined;
  /** The Response the stream ended with (completed, incomplete or failed), once it has. */
  final: JsonObject | undefined;

  constructor(private readonly frame: ResponseFrame) {}

  push(text: string): string {
    return this.sse.push(text);
  }

  /** What is still owed when the chat stream ended: a stream cut before `[DONE]` fails. */
  end(): string {
    const out = this.sse.end();
    if (this.finished) return out;
    return out + this.fail({ code: 'stream_interrupted', message: 'The provider stream ended before the answer was complete' });
  }

  get done(): boolean {
    return this.finished;
  }

  private event(type: string, data: JsonObject): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`;
  }

  private snapshot(status: string, extra: Parameters<typeof responseObject>[3] = {}): JsonObject {
    return responseObject(this.frame, status, this.output, { model: this.model, ...extra });
  }

  /** One event's data from the chat stream: a chunk, `[DONE]` or the gateway's error frame. */
  private onData(payload: string): string {
    if (this.finished) return '';
    if (payload === '[DONE]') return this.complete();
    let chunk: unknown;
    try {
      chunk = JSON.parse(payload);
    } catch {
      return this.fail({ code: 'upstream_invalid_response', message: `malformed stream chunk: ${payload.slice(0, 120)}` });
    }
    if (!isObject(chunk)) return '';
    if (isObject(chunk.error)) {
      const e = chunk.error;
      return this.fail({ code: typeof e.code === 'string' ? e.code : 'upstream_error', message: typeof e.message === 'string' ? e.message : 'The provider failed mid-stream' });
    }
    return this.chunk(chunk);
  }

  private start(): string {
    this.started = true;
    const response = this.snapshot('in_progress');
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private chunk(chunk: JsonObject): string {
    if (typeof chunk.model === 'string') this.model = chunk.model;
    let out = this.started ? '' : this.start();
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') out += this.appendText('reasoning', reasoning);
    if (typeof delta.content === 'string' && delta.content !== '') out += this.appendText('message', delta.content);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isObject(call)) out += this.toolPiece(call);
    if (typeof choice.finish_reason === 'string') this.finish = choice.finish_reason;
    return out;
  }

  private add(item: OpenItem, shape: JsonObject): string {
    this.output.push(shape);
    return this.event('response.output_item.added', { output_index: item.index, item: shape });
  }

  private appendText(kind: 'message' | 'reasoning', delta: string): string {
    let out = '';
    if (this.current?.kind !== kind) {
      out += this.closeCurrent();
      const item: OpenItem = { kind, index: this.output.length, id: newId(kind === 'message' ? 'msg' : 'rs'), text: '' };
      this.current = item;
      if (kind === 'message') {
        out += this.add(item, { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
        out += this.event('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      } else {
        out += this.add(item, { id: item.id, type: 'reasoning', summary: [] });
        out += this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      }
    }
    const item = this.current as OpenItem;
    item.text += delta;
    if (kind === 'message') return out + this.event('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta, logprobs: [] });
    return out + this.event('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta });
  }

  private closeCurrent(): string {
    const item = this.current;
    if (!item) return '';
    this.current = undefined;
    if (item.kind === 'message') {
      const part = { type: 'output_text', text: item.text, annotations: [] };
      const done = messageItem(item.id, item.text);
      this.output[item.index] = done;
      return (
        this.event('response.output_text.done', { item_id: item.id, output_index: item.index, content_index: 0, text: item.text, logprobs: [] }) +
        this.event('response.content_part.done', { item_id: item.id, output_index: item.index, content_index: 0, part }) +
        this.event('response.output_item.done', { output_index: item.index, item: done })
      );
    }
    const done = reasoningItem(item.id, item.text);
    this.output[item.index] = done;
    return (
      this.event('response.reasoning_summary_text.done', { item_id: item.id, output_index: item.index, summary_index: 0, text: item.text }) +
      this.event('response.reasoning_summary_part.done', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: item.text } }) +
      this.event('response.output_item.done', { output_index: item.index, item: done })
    );
  }

  private toolPiece(call: JsonObject): string {
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let item = this.calls.get(callIndex);
    if (!item) {
      out += this.closeCurrent();
      item = {
        kind: 'function_call',
        index: this.output.length,
        id: newId('fc'),
        text: '',
        callId: typeof call.id === 'string' ? call.id : newId('fc'),
        name: typeof fn.name === 'string' ? fn.name : '',
      };
      this.calls.set(callIndex, item);
      out += this.add(item, functionCallItem(item.id, item.callId as string, item.name as string, '', 'in_progress'));
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      item.text += fn.arguments;
      out += this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: fn.arguments });
    }
    return out;
  }

  private closeCalls(): string {
    let out = '';
    for (const item of this.calls.values()) {
      const done = functionCallItem(item.id, item.callId as string, item.name as string, item.text);
      this.output[item.index] = done;
      out += this.event('response.function_call_arguments.done', { item_id: item.id, output_index: item.index, name: item.name as string, arguments: item.text });
      out += this.event('response.output_item.done', { output_index: item.index, item: done });
    }
    this.calls.clear();
    return out;
  }

  private complete(): string {
    this.finished = true;
    let out = this.started ? '' : this.start();
    out += this.closeCurrent() + this.closeCalls();
    const { status, incomplete } = statusOf(this.finish);
    this.final = this.snapshot(status, { usage: responsesUsage(this.usage), incomplete });
    return out + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.final });
  }

  private fail(error: { code: string; message: string }): string {
    this.finished = true;
    let out = this.started ? '' : this.start();
    out += this.event('error', { code: error.code, message: error.message, param: null });
    this.final = this.snapshot('failed', { usage: responsesUsage(this.usage), error });
    return out + this.event('response.failed', { response: this.final });
  }
}
