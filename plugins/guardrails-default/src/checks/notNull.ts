/**
 * `default.notNull` {}: passes when there is something to judge.
 * - output: the first choice of a chat completion has non-blank text content, tool calls, a function call or audio;
 *   the first choice of a text completion has non-blank text. An absent or error answer fails.
 * - input: the last user message has non-blank text or any non-text part (an image, audio, a file); a prompt or
 *   input has non-blank text.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { contentText, judgedText } from '../text.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const blank = (s: string | undefined) => s === undefined || s.trim() === '';
const hasNonTextPart = (content: Json | undefined) =>
  Array.isArray(content) && content.some((part) => isObject(part) && part.type !== undefined && part.type !== 'text');

function hasAnswer(body: JsonObject | undefined): boolean {
  const first = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  if (!isObject(first)) return false;
  const message = first.message;
  if (isObject(message)) {
    if (!blank(contentText(message.content))) return true;
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) return true;
    if (isObject(message.function_call) || isObject(message.audio)) return true;
    return hasNonTextPart(message.content);
  }
  return typeof first.text === 'string' && !blank(first.text);
}

function hasInput(body: JsonObject | undefined): boolean {
  if (!body) return false;
  if (Array.isArray(body.messages)) {
    for (let i = body.messages.length - 1; i >= 0; i--) {
      const message = body.messages[i];
      if (isObject(message) && message.role === 'user')
        return !blank(contentText(message.content)) || hasNonTextPart(message.content);
    }
    return false;
  }
  return false;
}

export const notNull = defineCheck({
  name: 'notNull',
  schema: Type.Object({}, { additionalProperties: false }),
  run(ctx) {
    const { text, source } = judgedText(ctx);
    const verdict =
      ctx.phase === 'output'
        ? hasAnswer(ctx.responseBody)
        : source === 'lastUserMessage'
          ? hasInput(ctx.request.body)
          : !blank(text);
    return {
      verdict,
      data: {
        source,
        explanation: verdict ? 'There is content.' : ctx.phase === 'output' ? 'The answer is empty.' : 'The request is empty.',
      },
    };
  },
});
