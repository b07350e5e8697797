import type { Json, JsonObject } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a chat stream has sent the client so far, read from the chunks the processor parses anyway: the answer's
 * text (the one thing a continuation needs, docs/streaming.md), the chunk identity a continuation repeats, and what
 * makes an answer impossible to continue. Per chunk it costs a few property reads and one string append.
 */
export class SentAnswer {
  /** The concatenated `delta.content` of choice 0. */
  text = '';
  id: Json | undefined;
  created: Json | undefined;
  model: Json | undefined;
  /** A tool-call delta went out: a tool call is not continued (its arguments cannot be prefilled). */
  toolCalls = false;
  /** A reasoning delta went out (a continuation does not repeat reasoning). */
  reasoning = false;
  /** More than one choice (`n` > 1): not continued. */
  manyChoices = false;
  /** The finish reason of choice 0, once sent. */
  finishReason: Json | undefined;

  observe(chunk: unknown): void {
    if (!isObject(chunk)) return;
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length === 0) return;
    if (this.id === undefined) {
      this.id = chunk.id;
      this.created = chunk.created;
      this.model = chunk.model;
    }
    if (choices.length > 1) this.manyChoices = true;
    const choice = choices[0];
    if (!isObject(choice)) return;
    if (choice.index !== undefined && choice.index !== 0) this.manyChoices = true;
    const delta = choice.delta;
    if (isObject(delta)) {
      const content = delta.content;
      if (typeof content === 'string' && content !== '') this.text += content;
      if (delta.tool_calls !== undefined && delta.tool_calls !== null) this.toolCalls = true;
      if (typeof delta.reasoning_content === 'string' || typeof delta.reasoning === 'string') this.reasoning = true;
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
  }

  /** Something the client reads as the answer went out (content, a tool call, reasoning, or the finish). */
  get started(): boolean {
    return this.text !== '' || this.toolCalls || this.reasoning || this.finishReason !== undefined;
  }

  /** Whether the rest of this answer can be asked of another attempt. */
  get continuable(): boolean {
    return !this.toolCalls && !this.manyChoices && this.finishReason === undefined;
  }
}
