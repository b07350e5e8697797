/**
 * OpenAI chat completions answer → Anthropic Messages answer (docs/anthropic-messages.md, "Response"). Pure.
 */
import type { Json, JsonObject } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** finish_reason → stop_reason. */
export function stopReasonOf(finish: Json | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * OpenAI usage → Anthropic usage. Anthropic's input_tokens excludes the cached prompt, which OpenAI's prompt_tokens
 * includes; cache writes are known only from adapters that pass Anthropic-style `cache_creation_input_tokens` on.
 */
export function messagesUsageOf(usage: Json | undefined): JsonObject {
  const u = isObject(usage) ? usage : {};
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cacheRead = count(details.cached_tokens) || count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return {
    input_tokens: Math.max(count(u.prompt_tokens) - cacheRead - cacheWrite, 0),
    output_tokens: count(u.completion_tokens),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** A Messages id for a chat id (kept recognisable, for following a call across logs). */
export function messageIdOf(id: Json | undefined): string {
  if (typeof id !== 'string' || id === '') return `msg_${crypto.randomUUID().replaceAll('-', '')}`;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** A tool call's arguments as the tool_use input object (an unparsable string is kept under `arguments`). */
export function toolInputOf(args: Json | undefined): JsonObject {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : { arguments: args };
  } catch {
    return { arguments: args };
  }
}

/** Reasoning text a chat answer carries: `reasoning_content` (the gateway's and DeepSeek's name) or `reasoning`. */
export function reasoningOf(message: JsonObject): string | undefined {
  const r = message.reasoning_content ?? message.reasoning;
  return typeof r === 'string' && r !== '' ? r : undefined;
}

/** The Messages answer for a chat completion (its first choice). */
export function chatToMessages(json: unknown, requestedModel: string | undefined): JsonObject {
  if (!isObject(json) || !Array.isArray(json.choices)) throw new Error('expected a chat completion with choices');
  const choice = json.choices[0];
  const message = isObject(choice) && isObject(choice.message) ? choice.message : {};
  const content: JsonObject[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = typeof message.content === 'string' ? message.content : typeof message.refusal === 'string' ? message.refusal : '';
  if (text) content.push({ type: 'text', text });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  for (const call of calls) {
    if (!isObject(call) || !isObject(call.function)) continue;
    content.push({ type: 'tool_use', id: typeof call.id === 'string' ? call.id : `toolu_${content.length}`, name: String(call.function.name ?? ''), input: toolInputOf(call.function.arguments) });
  }
  if (isObject(message.function_call))
    content.push({ type: 'tool_use', id: 'toolu_function_call', name: String(message.function_call.name ?? ''), input: toolInputOf(message.function_call.arguments) });
  return {
    id: messageIdOf(json.id),
    type: 'message',
    role: 'assistant',
    model: typeof json.model === 'string' ? json.model : (requestedModel ?? ''),
    content,
    stop_reason: stopReasonOf(isObject(choice) ? choice.finish_reason : undefined),
    stop_sequence: null,
    usage: messagesUsageOf(json.usage),
  };
}
