/**
 * Streamed answers (SSE) under output guardrails. The stream is forwarded as it arrives, event by event (only an
 * event whose end has not arrived yet is held back), while its chunks are assembled into the answer a non-streamed
 * call would have given. The closing `data: [DONE]` is held back: when the stream ended whole, `finish` judges the
 * assembled answer and says what to send before the end (a `hook_results` event) and whether to end with `[DONE]`
 * (or, denied, with an error frame instead). A stream that does not end whole (cut, error frame, client gone) is
 * passed on as it is and not judged.
 */
import type { Json, JsonObject } from '@gateway/sdk';

const encoder = new TextEncoder();
const DONE = encoder.encode('data: [DONE]\n\n');

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);

interface ToolCallParts {
  id?: string;
  type?: string;
  name: string[];
  arguments: string[];
}

interface ChoiceParts {
  role?: string;
  content: string[];
  refusal: string[];
  text: string[];
  toolCalls: Map<number, ToolCallParts>;
  finishReason: Json;
  hasContent: boolean;
}

/** Builds a whole answer from OpenAI chunks: `chat.completion.chunk` → `chat.completion`, text completions alike. */
export class StreamAssembler {
  private meta: Obj | undefined;
  private chat = false;
  private usage: Json | undefined;
  private readonly choices = new Map<number, ChoiceParts>();

  constructor(private readonly collect: boolean) {}

  /** The id, model, created and object of the first chunk, for an event the engine adds. */
  get first(): Obj | undefined {
    return this.meta;
  }

  push(event: unknown): void {
    if (!isObj(event)) return;
    if (!this.meta && event.error === undefined) {
      this.meta = { id: event.id, object: event.object, created: event.created, model: event.model };
      if (event.system_fingerprint !== undefined) this.meta.system_fingerprint = event.system_fingerprint;
    }
    if (!this.collect) return;
    if (event.object === 'chat.completion.chunk') this.chat = true;
    if (event.usage !== undefined && event.usage !== null) this.usage = event.usage as Json;
    if (!Array.isArray(event.choices)) return;
    for (const choice of event.choices) {
      if (!isObj(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let parts = this.choices.get(index);
      if (!parts) {
        parts = { content: [], refusal: [], text: [], toolCalls: new Map(), finishReason: null, hasContent: false };
        this.choices.set(index, parts);
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) parts.finishReason = choice.finish_reason as Json;
      if (typeof choice.text === 'string') parts.text.push(choice.text);
      const delta = choice.delta;
      if (!isObj(delta)) continue;
      this.chat = true;
      if (typeof delta.role === 'string') parts.role = delta.role;
      if (typeof delta.content === 'string') {
        parts.content.push(delta.content);
        parts.hasContent = true;
      }
      if (typeof delta.refusal === 'string') parts.refusal.push(delta.refusal);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          if (!isObj(call)) continue;
          const i = typeof call.index === 'number' ? call.index : 0;
          let tool = parts.toolCalls.get(i);
          if (!tool) {
            tool = { name: [], arguments: [] };
            parts.toolCalls.set(i, tool);
          }
          if (typeof call.id === 'string') tool.id = call.id;
          if (typeof call.type === 'string') tool.type = call.type;
          const fn = call.function;
          if (isObj(fn)) {
            if (typeof fn.name === 'string') tool.name.push(fn.name);
            if (typeof fn.arguments === 'string') tool.arguments.push(fn.arguments);
          }
        }
      }
    }
  }

  /** The assembled answer. */
  answer(): JsonObject {
    const meta = this.meta ?? {};
    const choices: JsonObject[] = [...this.choices.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, p]): JsonObject => {
        if (!this.chat) return { index, text: p.text.join(''), finish_reason: p.finishReason, logprobs: null };
        const message: JsonObject = { role: p.role ?? 'assistant', content: p.hasContent ? p.content.join('') : null };
        if (p.refusal.length) message.refusal = p.refusal.join('');
        if (p.toolCalls.size) {
          message.tool_calls = [...p.toolCalls.entries()]
            .sort((a, b) => a[0] - b[0])
            .map(([, t]) => ({ id: t.id ?? null, type: t.type ?? 'function', function: { name: t.name.join(''), arguments: t.arguments.join('') } }));
        }
        return { index, message, finish_reason: p.finishReason, logprobs: null };
      });
    const out: JsonObject = {
      id: (meta.id as Json) ?? null,
      object: this.chat ? 'chat.completion' : 'text_completion',
      created: (meta.created as Json) ?? null,
      model: (meta.model as Json) ?? null,
      choices,
    };
    if (meta.system_fingerprint !== undefined) out.system_fingerprint = meta.system_fingerprint as Json;
    if (this.usage !== undefined) out.usage = this.usage;
    return out;
  }
}

export interface StreamEnd {
  /** Frames (whole SSE events, `data: …\n\n`) to send before the end. */
  frames: string[];
  /** End with `data: [DONE]` (false: the last frame was an error). */
  done: boolean;
}

export interface StreamGuard {
  /** Whether to assemble the answer (output guardrails judge it); false: only the first chunk's meta is read. */
  assemble: boolean;
  /** The stream ended whole: judge it and say how to end. */
  finish(assembled: StreamAssembler): Promise<StreamEnd>;
  /** The stream did not end whole (cut, error frame, client gone): nothing is judged. */
  abandon(): void;
}

/** The stream the client gets: `source` forwarded event by event, ended as `guard.finish` says. */
export function guardStream(source: ReadableStream<Uint8Array>, guard: StreamGuard): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  const assembler = new StreamAssembler(guard.assemble);
  let buffer = '';
  /** Raw lines of the event being read. */
  let event = '';
  let data: string[] = [];
  let sawDone = false;
  let ended = false;
  /** `guard.finish` is running: it settles the request's hooks itself, even if the client leaves meanwhile. */
  let finishing = false;

  const end = (whole: boolean) => {
    if (ended) return;
    ended = true;
    if (!whole && !finishing) guard.abandon();
  };

  /** Client bytes for the text read so far: whole events, `[DONE]` held back. */
  function consume(text: string): string {
    buffer += text;
    let out = '';
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf('\n', start);
      if (nl < 0) break;
      const line = buffer.slice(start, nl + 1);
      start = nl + 1;
      const content = line.endsWith('\r\n') ? line.slice(0, -2) : line.slice(0, -1);
      if (content !== '') {
        event += line;
        if (content.startsWith('data:')) data.push(content.charCodeAt(5) === 32 ? content.slice(6) : content.slice(5));
        continue;
      }
      // A blank line ends the event.
      const payload = data.join('\n');
      if (sawDone) {
        // Nothing belongs after [DONE].
      } else if (payload === '[DONE]') sawDone = true;
      else {
        out += event + line;
        if (payload !== '' && (guard.assemble || !assembler.first)) {
          try {
            assembler.push(JSON.parse(payload));
          } catch {
            // Not JSON (a comment-only event, say): forwarded, not assembled.
          }
        }
      }
      event = '';
      data = [];
    }
    buffer = buffer.slice(start);
    return out;
  }

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const out = consume(decoder.decode(value, { stream: true }));
          if (out !== '') {
            controller.enqueue(encoder.encode(out));
            return;
          }
        }
      } catch (error) {
        end(false);
        controller.error(error);
        return;
      }
      const rest = consume(decoder.decode()) + event + buffer;
      if (!sawDone) {
        if (rest !== '') controller.enqueue(encoder.encode(rest));
        end(false);
        controller.close();
        return;
      }
      let finish: StreamEnd;
      finishing = true;
      try {
        finish = await guard.finish(assembler);
      } catch {
        finish = { frames: [], done: true };
      }
      if (ended) return; // the client left while the answer was judged
      end(true);
      if (finish.frames.length) controller.enqueue(encoder.encode(finish.frames.join('')));
      if (finish.done) controller.enqueue(DONE);
      controller.close();
    },
    cancel(reason) {
      end(false);
      return reader.cancel(reason).catch(() => {});
    },
  });
}

/** `data: <json>\n\n`. */
export const frame = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
