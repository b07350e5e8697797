/**
 * What text a check judges, and how transformers rewrite text without touching their input.
 *
 * Judged text (`judgedText`):
 * - input phase, from the request body as it is now (`ctx.request.body`), by its shape:
 *   - `messages` (chat completions): the text of the LAST message whose role is `user`. A string content is taken
 *     as it is; an array content contributes its `text` parts joined with a newline (images and audio are skipped).
 *     No user message, or one with no text part, means no text.
 *   - `prompt` (text completions): the prompt; an array of prompts is joined with newlines (token arrays skipped).
 *   - `input` (embeddings, moderations): the input string, or its strings / `text` parts joined with newlines.
 *   - `input` of the Responses API (message items): like chat, the text of the LAST item whose role is `user`
 *     (`input_text` parts); a string input is taken as it is.
 * - output phase, from `ctx.responseBody`:
 *   - a chat completion: the assistant content of the FIRST choice (`choices[0].message.content`, string or text
 *     parts);
 *   - a text completion: `choices[0].text`;
 *   - a Response (`object: "response"`): the `output_text` parts of its message items, joined with newlines.
 * Anything else (no body, an error body, a model list…) has no text: `text` is undefined.
 *
 * Transformed text (`mapTexts`) covers more than the judged text, so that nothing slips past a redaction:
 * - input: every message's text (every role, string or text parts), or every prompt, or every input string;
 * - output: the content / text of every choice.
 * The input body is never changed: changed objects are copied along the path to each changed string.
 */
import type { GuardrailCheckContext, Json, JsonObject } from '@gateway/sdk';

export type TextSource = 'lastUserMessage' | 'prompt' | 'input' | 'chatCompletion' | 'textCompletion' | 'response' | 'none';

export interface JudgedText {
  /** Undefined when the body holds no text to judge. */
  text: string | undefined;
  source: TextSource;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text of a message content: a string, or the `text` parts of an array joined with newlines. */
export function contentText(content: Json | undefined): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || part.type === 'text'))
      texts.push(part.text);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Strings of a `prompt` / `input` value (token arrays and images skipped). */
function stringsOf(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  const texts: string[] = [];
  for (const item of value) {
    if (typeof item === 'string') texts.push(item);
    else if (isObject(item) && typeof item.text === 'string') texts.push(item.text);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** The text of a Responses message item's content: a string, or its input_text / output_text parts. */
function itemText(content: Json | undefined): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((part) =>
    isObject(part) && (part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string' ? [part.text] : [],
  );
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** A Responses input of items (objects with a role), not embeddings' strings or token arrays. */
const isItemList = (value: Json | undefined): value is Json[] => Array.isArray(value) && value.some((item) => isObject(item) && typeof item.role === 'string');

export function requestText(body: JsonObject | undefined): JudgedText {
  if (!body) return { text: undefined, source: 'none' };
  if (Array.isArray(body.messages)) {
    for (let i = body.messages.length - 1; i >= 0; i--) {
      const message = body.messages[i];
      if (isObject(message) && message.role === 'user') return { text: contentText(message.content), source: 'lastUserMessage' };
    }
    return { text: undefined, source: 'lastUserMessage' };
  }
  if ('prompt' in body) return { text: stringsOf(body.prompt), source: 'prompt' };
  if (isItemList(body.input)) {
    for (let i = body.input.length - 1; i >= 0; i--) {
      const item = body.input[i];
      if (isObject(item) && item.role === 'user') return { text: itemText(item.content), source: 'lastUserMessage' };
    }
    return { text: undefined, source: 'lastUserMessage' };
  }
  if ('input' in body) return { text: stringsOf(body.input), source: 'input' };
  return { text: undefined, source: 'none' };
}

export function responseText(body: JsonObject | undefined): JudgedText {
  if (body?.object === 'response' && Array.isArray(body.output)) {
    const texts = body.output.flatMap((item) => (isObject(item) && item.type === 'message' ? (itemText(item.content) ?? []) : []));
    return { text: texts.length > 0 ? texts.join('\n') : undefined, source: 'response' };
  }
  const choices = body?.choices;
  if (!Array.isArray(choices) || choices.length === 0) return { text: undefined, source: 'none' };
  const first = choices[0];
  if (!isObject(first)) return { text: undefined, source: 'none' };
  if (isObject(first.message)) return { text: contentText(first.message.content), source: 'chatCompletion' };
  if (typeof first.text === 'string') return { text: first.text, source: 'textCompletion' };
  return { text: undefined, source: 'none' };
}

/** The text a check judges in this phase (see the top of this file). */
export function judgedText(ctx: GuardrailCheckContext): JudgedText {
  return ctx.phase === 'input' ? requestText(ctx.request.body) : responseText(ctx.responseBody);
}

/** The body a transformer starts from in this phase: the request body (input) or the answer (output). */
export function phaseBody(ctx: GuardrailCheckContext): JsonObject | undefined {
  return ctx.phase === 'input' ? ctx.request.body : ctx.responseBody;
}

// ---- rewriting ----------------------------------------------------------------------------------------------

/** Where a rewritten string sits, for `data` (e.g. `messages[2].content[0].text`). */
export type TextMapper = (text: string, where: string) => string;

function mapContent(content: Json | undefined, where: string, fn: TextMapper): Json | undefined {
  if (typeof content === 'string') {
    const next = fn(content, where);
    return next === content ? content : next;
  }
  if (!Array.isArray(content)) return content;
  let out: Json[] | undefined;
  content.forEach((part, i) => {
    let next: Json = part;
    if (typeof part === 'string') next = fn(part, `${where}[${i}]`);
    else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || part.type === 'text')) {
      const text = fn(part.text, `${where}[${i}].text`);
      if (text !== part.text) next = { ...part, text };
    }
    if (next !== part) {
      out ??= content.slice();
      out[i] = next;
    }
  });
  return out ?? content;
}

function mapStrings(value: Json | undefined, where: string, fn: TextMapper): Json | undefined {
  if (typeof value === 'string') return fn(value, where);
  if (!Array.isArray(value)) return value;
  let out: Json[] | undefined;
  value.forEach((item, i) => {
    let next: Json = item;
    if (typeof item === 'string') next = fn(item, `${where}[${i}]`);
    else if (isObject(item) && typeof item.text === 'string') {
      const text = fn(item.text, `${where}[${i}].text`);
      if (text !== item.text) next = { ...item, text };
    }
    if (next !== item) {
      out ??= value.slice();
      out[i] = next;
    }
  });
  return out ?? value;
}

function mapRequest(body: JsonObject, fn: TextMapper, roles?: ReadonlySet<string>): JsonObject {
  if (Array.isArray(body.messages)) {
    const messages = body.messages;
    let out: Json[] | undefined;
    messages.forEach((message, i) => {
      if (!isObject(message) || (roles && !roles.has(String(message.role)))) return;
      const content = mapContent(message.content, `messages[${i}].content`, fn);
      if (content !== message.content) {
        out ??= messages.slice();
        out[i] = { ...message, content: content ?? null };
      }
    });
    return out ? { ...body, messages: out } : body;
  }
  for (const key of ['prompt', 'input'] as const) {
    if (key in body) {
      const next = mapStrings(body[key], key, fn);
      return next === body[key] ? body : { ...body, [key]: next ?? null };
    }
  }
  return body;
}

function mapResponse(body: JsonObject, fn: TextMapper): JsonObject {
  const choices = body.choices;
  if (!Array.isArray(choices)) return body;
  let out: Json[] | undefined;
  choices.forEach((choice, i) => {
    if (!isObject(choice)) return;
    let next: JsonObject = choice;
    if (isObject(choice.message)) {
      const content = mapContent(choice.message.content, `choices[${i}].message.content`, fn);
      if (content !== choice.message.content) next = { ...choice, message: { ...choice.message, content: content ?? null } };
    } else if (typeof choice.text === 'string') {
      const text = fn(choice.text, `choices[${i}].text`);
      if (text !== choice.text) next = { ...choice, text };
    }
    if (next !== choice) {
      out ??= choices.slice();
      out[i] = next;
    }
  });
  return out ? { ...body, choices: out } : body;
}

export interface MappedBody {
  /** The new body, or undefined when nothing changed (or there was no body). */
  body: JsonObject | undefined;
  /** How many strings `fn` was given. */
  visited: number;
}

/**
 * Rewrites every text of the phase's body (see the top of this file) with `fn`, returning a new body when any string
 * changed. `roles` limits chat messages to those roles (input phase only).
 */
export function mapTexts(ctx: GuardrailCheckContext, fn: TextMapper, roles?: ReadonlySet<string>): MappedBody {
  const body = phaseBody(ctx);
  if (!body) return { body: undefined, visited: 0 };
  let visited = 0;
  const counting: TextMapper = (text, where) => {
    visited++;
    return fn(text, where);
  };
  const next = ctx.phase === 'input' ? mapRequest(body, counting, roles) : mapResponse(body, counting);
  return { body: next === body ? undefined : next, visited };
}

/** The request's model: the body's `model`, else the config's `override_params.model`. */
export function requestModel(ctx: GuardrailCheckContext): string | undefined {
  const model = ctx.request.body?.model;
  if (typeof model === 'string' && model !== '') return model;
  const override = ctx.request.config.override_params?.model;
  return typeof override === 'string' && override !== '' ? override : undefined;
}
