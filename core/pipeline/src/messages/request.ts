/**
 * Anthropic Messages request → OpenAI chat completions request, for a provider that does not speak Messages
 * (docs/anthropic-messages.md, "Request"). Pure; throws a 400 naming the field for what has no chat equivalent.
 */
import { Errors, type Json, type JsonObject } from '@gateway/sdk';

export interface ChatRequestOptions {
  /**
   * The provider's chat translator rewrites the body (it has `request`): it reads the gateway's chat extensions
   * `thinking` and `top_k`. Otherwise the body reaches an OpenAI-speaking server as is, which knows neither:
   * thinking becomes `reasoning_effort` and top_k is left out.
   */
  translates: boolean;
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function blocksOf(content: Json | undefined, where: string): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw Errors.badRequest(`${where}: must be a string or an array of content blocks`, where);
  return content.map((block, i) => {
    if (!isObject(block) || typeof block.type !== 'string') throw Errors.badRequest(`${where}[${i}]: must be a content block`, `${where}[${i}]`);
    return block;
  });
}

function textOf(block: JsonObject, where: string): string {
  if (typeof block.text !== 'string') throw Errors.badRequest(`${where}.text: must be a string`, `${where}.text`);
  return block.text;
}

/** An image block as an OpenAI image part: base64 sources become data URLs, URL sources stay URLs. */
function imagePart(block: JsonObject, where: string): JsonObject {
  const source = block.source;
  if (isObject(source) && source.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string')
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (isObject(source) && source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw Errors.badRequest(`${where}.source: must be a base64 or url image source`, `${where}.source`);
}

/** A document block (PDF as base64, or plain text) as an OpenAI part. */
function documentPart(block: JsonObject, where: string): JsonObject {
  const source = block.source;
  if (isObject(source) && source.type === 'text' && typeof source.data === 'string') return { type: 'text', text: source.data };
  if (isObject(source) && source.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string')
    return { type: 'file', file: { file_data: `data:${source.media_type};base64,${source.data}`, ...(typeof block.title === 'string' ? { filename: block.title } : {}) } };
  throw Errors.badRequest(`${where}.source: only base64 and text documents can be translated`, `${where}.source`);
}

/** A tool_result's content as the text of an OpenAI tool message (images in it go to a user message after). */
function toolResult(block: JsonObject, where: string): { text: string; images: JsonObject[] } {
  if (typeof block.tool_use_id !== 'string') throw Errors.badRequest(`${where}.tool_use_id: must be a string`, `${where}.tool_use_id`);
  const content = block.content;
  const images: JsonObject[] = [];
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    blocksOf(content, `${where}.content`).forEach((part, i) => {
      if (part.type === 'text') texts.push(textOf(part, `${where}.content[${i}]`));
      else if (part.type === 'image') images.push(imagePart(part, `${where}.content[${i}]`));
      else throw Errors.badRequest(`${where}.content[${i}].type: ${String(part.type)} cannot be translated in a tool result`, `${where}.content[${i}].type`);
    });
    text = texts.join('\n');
  } else if (content !== undefined && content !== null) throw Errors.badRequest(`${where}.content: must be a string or an array`, `${where}.content`);
  // OpenAI has no error flag on a tool message: the model is told in the text.
  if (block.is_error === true) text = text ? `Error: ${text}` : 'Error';
  return { text, images };
}

function userMessages(content: Json | undefined, where: string): JsonObject[] {
  const out: JsonObject[] = [];
  const parts: JsonObject[] = [];
  blocksOf(content, where).forEach((block, i) => {
    const at = `${where}[${i}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: textOf(block, at) });
        break;
      case 'image':
        parts.push(imagePart(block, at));
        break;
      case 'document':
        parts.push(documentPart(block, at));
        break;
      case 'tool_result': {
        // Tool messages must follow the assistant's tool calls directly: they go before this turn's other parts.
        const result = toolResult(block, at);
        out.push({ role: 'tool', tool_call_id: block.tool_use_id as string, content: result.text });
        parts.push(...result.images);
        break;
      }
      default:
        throw Errors.badRequest(`${at}.type: ${block.type} cannot be translated for this provider`, `${at}.type`);
    }
  });
  if (parts.length) {
    const onlyText = parts.every((p) => p.type === 'text');
    out.push({ role: 'user', content: onlyText ? parts.map((p) => p.text as string).join('\n') : parts });
  }
  return out;
}

function assistantMessage(content: Json | undefined, where: string): JsonObject {
  const texts: string[] = [];
  const calls: JsonObject[] = [];
  blocksOf(content, where).forEach((block, i) => {
    const at = `${where}[${i}]`;
    switch (block.type) {
      case 'text':
        texts.push(textOf(block, at));
        break;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw Errors.badRequest(`${at}: a tool_use block needs id and name`, at);
        calls.push({ type: 'function', id: block.id, function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      // Thinking is the model's own and carries a signature only Anthropic can check: not sent to another model.
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw Errors.badRequest(`${at}.type: ${block.type} cannot be translated for this provider`, `${at}.type`);
    }
  });
  const message: JsonObject = { role: 'assistant', content: texts.length ? texts.join('') : null };
  if (calls.length) message.tool_calls = calls;
  return message;
}

function systemText(system: Json | undefined): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system;
  return blocksOf(system, 'system')
    .map((block, i) => {
      if (block.type !== 'text') throw Errors.badRequest(`system[${i}].type: must be text`, `system[${i}].type`);
      return textOf(block, `system[${i}]`);
    })
    .join('\n');
}

function tools(list: Json | undefined): JsonObject[] | undefined {
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) throw Errors.badRequest('tools: must be an array', 'tools');
  return list.map((tool, i) => {
    // Client tools have no type (or `custom`); Anthropic's server tools (web search, bash, …) run at Anthropic only.
    if (!isObject(tool) || typeof tool.name !== 'string' || (tool.type !== undefined && tool.type !== 'custom'))
      throw Errors.badRequest(`tools[${i}]: only client tools (name, description, input_schema) can be translated for this provider`, `tools[${i}]`);
    const fn: JsonObject = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    fn.parameters = isObject(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} };
    return { type: 'function', function: fn };
  });
}

function toolChoice(choice: Json | undefined): { choice?: Json; parallel?: boolean } {
  if (!isObject(choice)) return {};
  const parallel = choice.disable_parallel_tool_use === true ? false : undefined;
  switch (choice.type) {
    case 'auto':
      return { choice: 'auto', parallel };
    case 'any':
      return { choice: 'required', parallel };
    case 'none':
      return { choice: 'none' };
    case 'tool':
      if (typeof choice.name !== 'string') throw Errors.badRequest('tool_choice.name: must be a string', 'tool_choice.name');
      return { choice: { type: 'function', function: { name: choice.name } }, parallel };
    default:
      throw Errors.badRequest('tool_choice.type: must be auto, any, tool or none', 'tool_choice.type');
  }
}

/** A thinking budget as OpenAI's reasoning effort (docs/anthropic-messages.md): up to 4k low, up to 16k medium. */
export function effortOf(budget: number | undefined): string {
  if (budget === undefined || budget <= 4096) return 'low';
  return budget <= 16384 ? 'medium' : 'high';
}

/** The chat completions body for a Messages body. */
export function messagesToChat(body: JsonObject, opts: ChatRequestOptions): JsonObject {
  if (!Array.isArray(body.messages)) throw Errors.badRequest('messages: must be an array', 'messages');
  const messages: JsonObject[] = [];
  const system = systemText(body.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  body.messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw Errors.badRequest(`${at}: must be an object`, at);
    if (message.role === 'user') messages.push(...userMessages(message.content, `${at}.content`));
    else if (message.role === 'assistant') messages.push(assistantMessage(message.content, `${at}.content`));
    else throw Errors.badRequest(`${at}.role: must be user or assistant`, `${at}.role`);
  });

  const out: JsonObject = { model: body.model ?? null, messages };
  const thinking = isObject(body.thinking) && body.thinking.type === 'enabled' ? body.thinking : undefined;
  if (typeof body.max_tokens === 'number') {
    // OpenAI's reasoning models take only max_completion_tokens; other servers know max_tokens best.
    if (thinking && !opts.translates) out.max_completion_tokens = body.max_tokens;
    else out.max_tokens = body.max_tokens;
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) out.stop = body.stop_sequences;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.top_k === 'number' && opts.translates) out.top_k = body.top_k;
  if (isObject(body.metadata) && typeof body.metadata.user_id === 'string') out.user = body.metadata.user_id;
  if (isObject(body.thinking)) {
    if (opts.translates) out.thinking = body.thinking;
    else if (thinking) out.reasoning_effort = effortOf(typeof thinking.budget_tokens === 'number' ? thinking.budget_tokens : undefined);
  }
  const offered = tools(body.tools);
  if (offered?.length) {
    out.tools = offered;
    const { choice, parallel } = toolChoice(body.tool_choice);
    if (choice !== undefined) out.tool_choice = choice;
    if (parallel === false) out.parallel_tool_calls = false;
  }
  if (body.stream === true) {
    out.stream = true;
    // message_delta carries the usage: ask for it whatever the client did.
    out.stream_options = { include_usage: true };
  }
  return out;
}
