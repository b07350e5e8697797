/**
 * OpenAI Responses request → OpenAI chat completions request, for a provider that does not speak Responses
 * (docs/responses.md, "Translation"). Pure; throws a 400 naming the field for what has no chat equivalent.
 */
import { Errors, type Json, type JsonObject } from '@gateway/sdk';

export interface ResponsesToChatOptions {
  /**
   * The provider's chat translator rewrites the body (it has `request`) and reads the gateway's `thinking`
   * extension; otherwise the body reaches an OpenAI-speaking server, which knows `reasoning_effort`.
   */
  translates: boolean;
  /** The items of the conversation before this request (`previous_response_id`), already as input items. */
  prior?: readonly JsonObject[];
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const bad = (where: string, reason: string) => Errors.badRequest(`${where}: ${reason}`, where);

/** A Responses input as a list of items: a string is one user message. */
export function inputItems(input: Json | undefined): JsonObject[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (!Array.isArray(input)) throw bad('input', 'must be a string or an array of input items');
  return input.map((item, i) => {
    if (!isObject(item)) throw bad(`input[${i}]`, 'must be an object');
    return item;
  });
}

/** The content parts of a message item as chat content (a string when it is text only). */
function contentOf(content: Json | undefined, where: string): string | JsonObject[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw bad(where, 'must be a string or an array of content parts');
  const parts = content.map((part, i): JsonObject => {
    const at = `${where}[${i}]`;
    if (!isObject(part)) throw bad(at, 'must be a content part');
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        if (typeof part.text !== 'string') throw bad(`${at}.text`, 'must be a string');
        return { type: 'text', text: part.text };
      case 'refusal':
        return { type: 'text', text: typeof part.refusal === 'string' ? part.refusal : '' };
      case 'input_image': {
        if (typeof part.image_url !== 'string') throw bad(`${at}.image_url`, 'must be a URL or data URL (file_id images cannot be translated)');
        const image: JsonObject = { url: part.image_url };
        if (typeof part.detail === 'string' && part.detail !== 'auto') image.detail = part.detail;
        return { type: 'image_url', image_url: image };
      }
      case 'input_file':
        if (typeof part.file_data !== 'string') throw bad(at, 'only input_file parts with file_data can be translated');
        return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
      default:
        throw bad(`${at}.type`, `content part ${JSON.stringify(part.type)} cannot be translated to a chat completion`);
    }
  });
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text as string).join('') : parts;
}

/** The text of a function_call_output's output (a string, or parts of which only text is kept). */
function outputText(output: Json | undefined, where: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
  throw bad(where, 'must be a string');
}

/** Input items → chat messages: consecutive function calls join one assistant message, as chat expects them. */
export function itemsToMessages(items: readonly JsonObject[], where = 'input'): JsonObject[] {
  const messages: JsonObject[] = [];
  items.forEach((item, i) => {
    const at = `${where}[${i}]`;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') throw bad(`${at}.role`, 'must be user, assistant, system or developer');
      const content = contentOf(item.content, `${at}.content`);
      // `developer` is OpenAI's newer name for system; chat adapters of other providers know system.
      messages.push({ role: role === 'developer' ? 'system' : role, content });
      return;
    }
    if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw bad(at, 'a function_call needs call_id and name');
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '{}' } };
      const last = messages[messages.length - 1];
      if (last && last.role === 'assistant' && (Array.isArray(last.tool_calls) || typeof last.content === 'string' || last.content === null)) {
        last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
      } else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw bad(`${at}.call_id`, 'must be a string');
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output, `${at}.output`) });
      return;
    }
    // Reasoning the model did before: chat has no input for it, and the answer it led to follows anyway.
    if (type === 'reasoning') return;
    throw bad(`${at}.type`, `input item ${JSON.stringify(type)} cannot be translated to a chat completion`);
  });
  return messages;
}

/** Function tools in chat's shape; the hosted tool kinds exist only at providers that run them. */
function chatTools(tools: Json | undefined): JsonObject[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool) || tool.type !== 'function')
      throw bad(`${at}.type`, `tool kind ${JSON.stringify(isObject(tool) ? tool.type : tool)} is run by OpenAI's Responses API only; this provider is translated, function tools only`);
    const fn: JsonObject = { name: tool.name ?? null };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (isObject(tool.parameters)) fn.parameters = tool.parameters;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: Json | undefined): Json | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  throw bad('tool_choice', 'only none, auto, required or a function can be translated');
}

/** `text.format` as chat's response_format. */
function responseFormat(text: Json | undefined): JsonObject | undefined {
  if (!isObject(text) || !isObject(text.format)) return undefined;
  const format = text.format;
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema: JsonObject = { name: format.name ?? 'response', schema: format.schema ?? {} };
    if (typeof format.strict === 'boolean') schema.strict = format.strict;
    if (typeof format.description === 'string') schema.description = format.description;
    return { type: 'json_schema', json_schema: schema };
  }
  throw bad('text.format.type', 'must be text, json_object or json_schema');
}

/** A reasoning effort as the thinking budget of the gateway's `thinking` extension (docs/responses.md). */
export const EFFORT_BUDGET: Readonly<Record<string, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

/** The chat body of a Responses request. `instructions` go first as a system message; prior items follow. */
export function responsesToChat(body: JsonObject, opts: ResponsesToChatOptions): JsonObject {
  const messages: JsonObject[] = [];
  if (typeof body.instructions === 'string' && body.instructions) messages.push({ role: 'system', content: body.instructions });
  if (opts.prior?.length) messages.push(...itemsToMessages(opts.prior, 'previous_response_id'));
  messages.push(...itemsToMessages(inputItems(body.input)));

  const out: JsonObject = { model: body.model ?? null, messages };
  const effort = isObject(body.reasoning) && typeof body.reasoning.effort === 'string' ? body.reasoning.effort : undefined;
  if (typeof body.max_output_tokens === 'number') {
    // OpenAI's reasoning models take only max_completion_tokens; other servers know max_tokens best.
    if (effort && !opts.translates) out.max_completion_tokens = body.max_output_tokens;
    else out.max_tokens = body.max_output_tokens;
  }
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.user === 'string') out.user = body.user;
  if (effort) {
    if (!opts.translates) out.reasoning_effort = effort;
    else if (EFFORT_BUDGET[effort] !== undefined) out.thinking = { type: 'enabled', budget_tokens: EFFORT_BUDGET[effort] };
  }
  const tools = chatTools(body.tools);
  if (tools) {
    out.tools = tools;
    const choice = chatToolChoice(body.tool_choice);
    if (choice !== undefined) out.tool_choice = choice;
    if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  }
  const format = responseFormat(body.text);
  if (format) out.response_format = format;
  if (body.stream === true) {
    out.stream = true;
    // response.completed carries the usage: asked for whatever the client did.
    out.stream_options = { include_usage: true };
  }
  return out;
}
