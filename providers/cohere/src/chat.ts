/**
 * OpenAI chat completions ⇄ Cohere Chat API v2 (`POST /v2/chat`).
 *
 * Request: messages keep their roles (`developer` becomes `system`, the deprecated `function` role a `tool`
 * message); content parts become Cohere's `text` / `image_url` items; an assistant turn that calls tools carries
 * its text as `tool_plan`; tools keep OpenAI's function form; `tool_choice` becomes `REQUIRED` / `NONE` (a named
 * tool: `REQUIRED` over that tool alone); `response_format` becomes Cohere's `json_object` (+ `json_schema`);
 * `stop` → `stop_sequences`, `top_p` → `p` (within Cohere's 0.01..0.99), penalties within 0..1,
 * `max_completion_tokens` / `max_tokens` → `max_tokens`, `thinking.budget_tokens` → `thinking.token_budget`.
 * Answer: `message.content` text items joined, `tool_plan` as the content beside tool calls, `tool_calls` as they
 * are, `finish_reason` mapped, usage from `usage.tokens` (never `billed_units`).
 */
import { Errors, type Json, type JsonObject, type TargetConfig, type TranslateContext } from '@gateway/sdk';
import { count, given, isObject, plainText } from './json.ts';

/**
 * What the answer's translation needs to know of the request, kept per attempt. The contract hands `request()`
 * and the answer's translators the same TranslateContext object but no copy of the client's body, so the few
 * fields that shape the answer (`stream_options.include_usage`) are remembered here, keyed by that object.
 */
const includeUsage = new WeakMap<TranslateContext, boolean>();

export function wantsUsageChunk(ctx: TranslateContext): boolean {
  return includeUsage.get(ctx) === true;
}

/** Fields Cohere accepts that OpenAI has no name for: passed on when a client sends them. */
const COHERE_NATIVE = ['k', 'safety_mode', 'documents', 'citation_options', 'strict_tools'] as const;

const bad = (param: string, reason: string) => Errors.badRequest(`${param}: ${reason}`, param);
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

// ---- request -------------------------------------------------------------------------------------------------

export function chatRequest(body: JsonObject, _target: TargetConfig, ctx: TranslateContext): JsonObject {
  if (!Array.isArray(body.messages)) throw bad('messages', 'must be an array');
  const out: JsonObject = {};
  if (typeof body.model === 'string') out.model = body.model;
  out.messages = toMessages(body.messages);

  const { tools, strict } = toTools(body);
  const choice = toToolChoice(body, tools);
  if (choice.tools?.length) out.tools = choice.tools;
  if (choice.value) out.tool_choice = choice.value;
  if (strict) out.strict_tools = true;

  const format = toResponseFormat(body.response_format);
  if (format) out.response_format = format;

  if (given(body.stop)) out.stop_sequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  const maxTokens = given(body.max_completion_tokens) ? body.max_completion_tokens : body.max_tokens;
  if (given(maxTokens)) out.max_tokens = maxTokens;
  if (given(body.temperature)) out.temperature = body.temperature;
  // Cohere's ranges are narrower than OpenAI's: `p` 0.01..0.99 (OpenAI's default top_p 1 means "no cut", which 0.99
  // comes closest to), penalties 0..1 (no negative penalty exists there).
  if (typeof body.top_p === 'number') out.p = clamp(body.top_p, 0.01, 0.99);
  if (given(body.seed)) out.seed = body.seed;
  if (typeof body.frequency_penalty === 'number') out.frequency_penalty = clamp(body.frequency_penalty, 0, 1);
  if (typeof body.presence_penalty === 'number') out.presence_penalty = clamp(body.presence_penalty, 0, 1);
  if (given(body.n) && body.n !== 1) throw bad('n', 'cohere returns one choice per request; n must be 1');
  if (isObject(body.thinking) && body.thinking.type === 'enabled') {
    out.thinking = given(body.thinking.budget_tokens)
      ? { type: 'enabled', token_budget: body.thinking.budget_tokens }
      : { type: 'enabled' };
  }
  for (const name of COHERE_NATIVE) if (given(body[name])) out[name] = body[name];

  const stream = body.stream === true;
  if (stream) out.stream = true;
  includeUsage.set(ctx, stream && isObject(body.stream_options) && body.stream_options.include_usage === true);
  return out;
}

function toMessages(messages: Json[]): JsonObject[] {
  const out: JsonObject[] = [];
  /** Ids given to deprecated `function_call`s, so that the `function` message answering one can name it. */
  const openFunctionCalls: { id: string; name: string }[] = [];
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw bad(at, 'must be an object');
    switch (message.role) {
      case 'system':
      case 'developer':
        out.push({ role: 'system', content: textItems(message.content, at) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(message.content, at) });
        break;
      case 'assistant':
        out.push(assistantMessage(message, i, openFunctionCalls));
        break;
      case 'tool':
        if (typeof message.tool_call_id !== 'string') throw bad(`${at}.tool_call_id`, 'is required for a tool message');
        out.push({ role: 'tool', tool_call_id: message.tool_call_id, content: toolContent(message.content, at) });
        break;
      case 'function': {
        const name = typeof message.name === 'string' ? message.name : '';
        const index = openFunctionCalls.findIndex((c) => c.name === name);
        const [call] = index >= 0 ? openFunctionCalls.splice(index, 1) : [{ id: `function_call_${name}`, name }];
        out.push({ role: 'tool', tool_call_id: call?.id ?? `function_call_${name}`, content: toolContent(message.content, at) });
        break;
      }
      default:
        throw bad(`${at}.role`, `cohere has no "${String(message.role)}" role`);
    }
  });
  return out;
}

/** System content: a string stays a string; parts become text items (only text is allowed there). */
function textItems(content: Json | undefined, at: string): Json {
  if (typeof content === 'string') return content;
  if (!given(content)) return '';
  if (!Array.isArray(content)) throw bad(`${at}.content`, 'must be a string or an array of parts');
  return content.map((part, j) => {
    if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string')
      throw bad(`${at}.content[${j}]`, 'only text parts are accepted here');
    return { type: 'text', text: part.text };
  });
}

function userContent(content: Json | undefined, at: string): Json {
  if (typeof content === 'string') return content;
  if (!given(content)) return '';
  if (!Array.isArray(content)) throw bad(`${at}.content`, 'must be a string or an array of parts');
  return content.map((part, j): JsonObject => {
    const where = `${at}.content[${j}]`;
    if (!isObject(part)) throw bad(where, 'must be an object');
    if (part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
    if (part.type === 'image_url') {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isObject(image) ? image.url : undefined;
      if (typeof url !== 'string') throw bad(`${where}.image_url.url`, 'is required');
      const imageUrl: JsonObject = { url };
      if (isObject(image) && typeof image.detail === 'string') imageUrl.detail = image.detail;
      return { type: 'image_url', image_url: imageUrl };
    }
    throw bad(where, `cohere does not accept "${String(part.type)}" content parts`);
  });
}

function assistantMessage(message: JsonObject, i: number, openFunctionCalls: { id: string; name: string }[]): JsonObject {
  const at = `messages[${i}]`;
  const calls: JsonObject[] = [];
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call, j) => {
      if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string')
        throw bad(`${at}.tool_calls[${j}]`, 'must be {id, type: "function", function: {name, arguments}}');
      calls.push({
        id: typeof call.id === 'string' ? call.id : `call_${i}_${j}`,
        type: 'function',
        function: { name: call.function.name, arguments: argumentsText(call.function.arguments) },
      });
    });
  }
  if (isObject(message.function_call) && typeof message.function_call.name === 'string') {
    const id = `function_call_${i}`;
    openFunctionCalls.push({ id, name: message.function_call.name });
    calls.push({ id, type: 'function', function: { name: message.function_call.name, arguments: argumentsText(message.function_call.arguments) } });
  }
  const text = plainText(message.content);
  if (!calls.length) return { role: 'assistant', content: text };
  // Cohere keeps the text that goes with tool calls in `tool_plan` (and answers with it there too).
  const out: JsonObject = { role: 'assistant', tool_calls: calls };
  if (text) out.tool_plan = text;
  return out;
}

function argumentsText(args: Json | undefined): string {
  if (typeof args === 'string') return args;
  return given(args) ? JSON.stringify(args) : '{}';
}

/** Tool results as text items (Cohere asks for a JSON string or content items; items say it is plain text). */
function toolContent(content: Json | undefined, at: string): Json {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!given(content)) return [{ type: 'text', text: '' }];
  if (!Array.isArray(content)) throw bad(`${at}.content`, 'must be a string or an array of parts');
  return content.map((part, j) => {
    if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string')
      throw bad(`${at}.content[${j}]`, 'only text parts are accepted in a tool result');
    return { type: 'text', text: part.text };
  });
}

interface CohereTool extends JsonObject {
  type: 'function';
  function: JsonObject;
}

/**
 * OpenAI function tools (or the deprecated `functions`) in Cohere's function form. A tool marked `strict` asks
 * for Cohere's `strict_tools` (which holds for every tool of the request).
 */
function toTools(body: JsonObject): { tools?: CohereTool[]; strict: boolean } {
  const fromTools = Array.isArray(body.tools) && body.tools.length > 0;
  const list = fromTools ? (body.tools as Json[]) : Array.isArray(body.functions) ? body.functions : undefined;
  if (!list?.length) return { strict: false };
  let strict = false;
  const tools = list.map((entry, j): CohereTool => {
    const at = fromTools ? `tools[${j}]` : `functions[${j}]`;
    const fn = fromTools ? (isObject(entry) && entry.type === 'function' ? entry.function : undefined) : entry;
    if (!isObject(fn) || typeof fn.name !== 'string') throw bad(at, 'cohere accepts only function tools with a name');
    const out: JsonObject = { name: fn.name };
    if (typeof fn.description === 'string') out.description = fn.description;
    if (isObject(fn.parameters)) out.parameters = fn.parameters;
    if (fn.strict === true) strict = true;
    return { type: 'function', function: out };
  });
  return { tools, strict };
}

/**
 * `none` → `NONE`, `required` → `REQUIRED`, `auto` → nothing (Cohere's default). Cohere cannot name one tool, so a
 * named choice is `REQUIRED` over that tool alone: the model must call it.
 */
function toToolChoice(body: JsonObject, tools: CohereTool[] | undefined): { value?: string; tools?: CohereTool[] } {
  const choice = given(body.tool_choice) ? body.tool_choice : body.function_call;
  if (!given(choice) || choice === 'auto') return { tools };
  if (choice === 'none') return { value: tools?.length ? 'NONE' : undefined, tools };
  if (!tools?.length) throw bad('tool_choice', 'needs tools');
  if (choice === 'required') return { value: 'REQUIRED', tools };
  const name = isObject(choice) ? (isObject(choice.function) ? choice.function.name : choice.name) : undefined;
  if (typeof name !== 'string') throw bad('tool_choice', 'must be "none", "auto", "required" or a named function');
  const only = tools.filter((t) => t.function.name === name);
  if (!only.length) throw bad('tool_choice', `names "${name}", which is not among the tools`);
  return { value: 'REQUIRED', tools: only };
}

function toResponseFormat(format: Json | undefined): JsonObject | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    return isObject(schema) ? { type: 'json_object', json_schema: schema } : { type: 'json_object' };
  }
  if (format.type === 'text') return { type: 'text' };
  throw bad('response_format.type', `cohere has no "${String(format.type)}" response format`);
}

// ---- answer --------------------------------------------------------------------------------------------------

/** Cohere's finish reasons; ERROR and TIMEOUT are failures, not endings, and become errors. */
export function finishReason(reason: unknown, error?: unknown): string {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR':
    case 'TIMEOUT':
      throw new Error(`cohere ended the answer with ${reason}${typeof error === 'string' && error ? `: ${error}` : ''}`);
    default:
      if (reason === undefined || reason === null) throw new Error('the answer has no finish_reason');
      return 'stop';
  }
}

/** OpenAI usage from Cohere's `usage.tokens` (billed units are a billing figure, not the tokens processed). */
export function usageOf(usage: unknown): JsonObject {
  const tokens = isObject(usage) && isObject(usage.tokens) ? usage.tokens : {};
  const input = count(tokens.input_tokens);
  const output = count(tokens.output_tokens);
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export function chatResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json) || !isObject(json.message)) throw new Error('expected a Cohere chat answer with a message');
  const message = json.message;
  let text = '';
  let thinking = '';
  if (typeof message.content === 'string') text = message.content;
  else if (Array.isArray(message.content)) {
    for (const item of message.content) {
      if (!isObject(item)) continue;
      if (item.type === 'text' && typeof item.text === 'string') text += item.text;
      else if (item.type === 'thinking' && typeof item.thinking === 'string') thinking += item.thinking;
    }
  }
  const toolCalls: JsonObject[] = [];
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call, j) => {
      if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string')
        throw new Error(`message.tool_calls[${j}] is not a function call`);
      toolCalls.push({
        id: typeof call.id === 'string' ? call.id : `call_${j}`,
        type: 'function',
        function: { name: call.function.name, arguments: argumentsText(call.function.arguments) },
      });
    });
  }
  const plan = typeof message.tool_plan === 'string' ? message.tool_plan : '';
  const content = text || plan;
  const out: JsonObject = { role: 'assistant', content: content || (toolCalls.length ? null : ''), refusal: null };
  if (toolCalls.length) out.tool_calls = toolCalls;
  if (thinking && !ctx.strictWireCompliance) out.reasoning_content = thinking;
  return {
    id: typeof json.id === 'string' ? json.id : 'chatcmpl-cohere',
    object: 'chat.completion',
    created: ctx.now,
    model: ctx.model ?? '',
    choices: [{ index: 0, message: out, logprobs: null, finish_reason: finishReason(json.finish_reason) }],
    usage: usageOf(json.usage),
  };
}
