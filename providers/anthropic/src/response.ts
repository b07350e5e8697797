/** Anthropic Messages API answer → OpenAI chat completion. Pure. */
import type { Json, JsonObject, TranslateContext } from '@gateway/sdk';
import { factsOf, isObject, JSON_TOOL_NAME, num, str } from './shared.ts';

/** Anthropic `stop_reason` → OpenAI `finish_reason`. */
export function toFinishReason(stopReason: unknown): string | null {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}

/**
 * Anthropic usage → OpenAI usage. Anthropic's `input_tokens` excludes cached input, so the prompt is the sum of
 * input_tokens, cache_read_input_tokens and cache_creation_input_tokens; cache reads are OpenAI's cached_tokens.
 * OpenAI has no name for cache writes: `cache_creation_input_tokens` is kept beside (when any), since they cost
 * more than plain input, and so is `cache_creation.ephemeral_1h_input_tokens`, the part written for an hour, which
 * costs more again (README, "Cost").
 */
export function toOpenAIUsage(usage: unknown): JsonObject {
  const u = isObject(usage) ? usage : {};
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const prompt = num(u.input_tokens) + cacheRead + cacheWrite;
  const completion = num(u.output_tokens);
  const out: JsonObject = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
  if (cacheWrite > 0) out.cache_creation_input_tokens = cacheWrite;
  // Writes with the 1-hour lifetime cost more than 5-minute ones: their count is kept as Anthropic names it.
  const cacheWrite1h = isObject(u.cache_creation) ? num(u.cache_creation.ephemeral_1h_input_tokens) : 0;
  if (cacheWrite1h > 0) out.cache_creation = { ephemeral_1h_input_tokens: cacheWrite1h };
  return out;
}

/**
 * An Anthropic message as an OpenAI chat completion. Text blocks join into `content`; tool_use blocks become
 * `tool_calls` (or `function_call` for a client that used the legacy `functions`); a call to the JSON-mode tool becomes
 * the content itself. With strict_wire_compliance false, thinking comes back as `reasoning_content`, and the blocks
 * (with their signatures, needed to hand thinking back in a later turn) as `content_blocks`.
 * Throws on anything that is not a message, so the core answers 502 upstream_invalid_response.
 */
export function fromAnthropicResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json) || !Array.isArray(json.content) || (json.type !== undefined && json.type !== 'message'))
    throw new Error('expected an Anthropic message with a content array');
  const surfaceThinking = ctx.strictWireCompliance === false;
  let text = '';
  let jsonText: string | undefined;
  let reasoning = '';
  const blocks: JsonObject[] = [];
  const calls: JsonObject[] = [];
  for (const block of json.content) {
    if (!isObject(block)) throw new Error('a content block is not an object');
    switch (block.type) {
      case 'text':
        text += str(block.text) ?? '';
        blocks.push({ type: 'text', text: str(block.text) ?? '' });
        break;
      case 'tool_use': {
        const name = str(block.name);
        if (name === undefined) throw new Error('a tool_use block has no name');
        const args = JSON.stringify(block.input ?? {});
        if (name === JSON_TOOL_NAME) jsonText = args;
        else calls.push({ id: str(block.id) ?? `call_${calls.length}`, type: 'function', function: { name, arguments: args } });
        break;
      }
      case 'thinking':
        reasoning += str(block.thinking) ?? '';
        blocks.push({ type: 'thinking', thinking: str(block.thinking) ?? '', signature: str(block.signature) ?? '' });
        break;
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: str(block.data) ?? '' });
        break;
      default:
        break; // server tool blocks and future kinds have no OpenAI counterpart
    }
  }

  let finish = toFinishReason(json.stop_reason) ?? 'stop';
  if (finish === 'tool_calls' && !calls.length) finish = 'stop'; // only the JSON-mode tool was called
  const message: JsonObject = { role: 'assistant', content: jsonText ?? (calls.length && !text ? null : text) };
  if (calls.length) {
    if (factsOf(ctx).legacyFunctions) {
      message.function_call = (calls[0] as JsonObject).function as Json;
      if (finish === 'tool_calls') finish = 'function_call';
    } else message.tool_calls = calls;
  }
  message.refusal = null;
  if (surfaceThinking && reasoning) message.reasoning_content = reasoning;
  if (surfaceThinking && blocks.some((b) => b.type !== 'text')) message.content_blocks = blocks;

  return {
    id: str(json.id) ?? `chatcmpl-${ctx.now}`,
    object: 'chat.completion',
    created: ctx.now,
    model: str(json.model) ?? ctx.model ?? '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: toOpenAIUsage(json.usage),
  };
}

/** Anthropic's model list (`{data: [{type, id, display_name, created_at}], has_more, …}`) in OpenAI's list shape. */
export function fromAnthropicModelList(json: unknown): JsonObject {
  if (!isObject(json) || !Array.isArray(json.data)) throw new Error('expected a model list with a data array');
  return {
    object: 'list',
    data: json.data.flatMap((model) => {
      if (!isObject(model) || typeof model.id !== 'string') return [];
      const created = Date.parse(str(model.created_at) ?? '');
      return [{ id: model.id, object: 'model', created: Number.isNaN(created) ? 0 : Math.floor(created / 1000), owned_by: 'anthropic' }];
    }),
  };
}
