import type { GuardrailCheckContext, Json, JsonObject } from '@gateway/sdk';

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A message `content`: a string, or parts of which the `text` parts count. */
function contentText(content: Json | undefined): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : []));
}

function stringsOf(value: Json | undefined): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** A Responses message's content: a string, or its `input_text` / `output_text` parts. */
function responsesContentText(content: Json | undefined): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) =>
    isObject(part) && (part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string' ? [part.text] : [],
  );
}

/** The message items of a Responses `input` (or `output`): their text. */
function responsesItemsText(items: Json | undefined): string[] {
  if (!Array.isArray(items)) return [];
  return items.flatMap((item) => (isObject(item) && (item.type === undefined || item.type === 'message') ? responsesContentText(item.content) : []));
}

/**
 * The text a check judges, parts joined by blank lines:
 * - input: every chat message's text (`messages[].content`, text parts of multi-part content), or a completion's
 *   `prompt`, or an embedding / moderation `input`;
 * - output: every choice's `message.content` (chat) or `text` (completion) of the answer.
 * - the Responses API (docs/responses.md): `instructions` and the text of the input's message items; the answer's
 *   `output_text` parts.
 * Empty when there is no text (an image-only message, a streamed answer the engine did not collect).
 */
export function textOf(ctx: GuardrailCheckContext): string {
  if (ctx.request.endpoint === 'responses') {
    if (ctx.phase === 'output') return responsesItemsText(ctx.responseBody?.output).join('\n\n');
    const body = ctx.request.body;
    if (!body) return '';
    const instructions = typeof body.instructions === 'string' ? [body.instructions] : [];
    return [...instructions, ...(typeof body.input === 'string' ? [body.input] : responsesItemsText(body.input))].join('\n\n');
  }
  if (ctx.phase === 'output') {
    const choices = ctx.responseBody?.choices;
    if (!Array.isArray(choices)) return '';
    return choices
      .flatMap((choice) => {
        if (!isObject(choice)) return [];
        if (isObject(choice.message)) return contentText(choice.message.content);
        return stringsOf(choice.text);
      })
      .join('\n\n');
  }
  const body = ctx.request.body;
  if (!body) return '';
  if (Array.isArray(body.messages)) {
    return body.messages.flatMap((m) => (isObject(m) ? contentText(m.content) : [])).join('\n\n');
  }
  return [...stringsOf(body.prompt), ...stringsOf(body.input)].join('\n\n');
}
