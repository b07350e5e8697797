/**
 * OpenAI chat completion body → Anthropic Messages API body. Pure: builds a new object and never mutates the body it
 * is given (fallback translates the same body again for another provider).
 */
import { Errors, type Json, type JsonObject, type TargetConfig, type TranslateContext } from '@gateway/sdk';
import {
  compact,
  DEFAULT_MAX_TOKENS,
  isObject,
  JSON_TOOL_NAME,
  rememberFacts,
  str,
  VERTEX_ANTHROPIC_VERSION,
} from './shared.ts';

export interface AnthropicRequestOptions {
  /**
   * Vertex AI rawPredict / streamRawPredict: the same body without `model` (it is in the URL) and with
   * `anthropic_version: "vertex-2023-10-16"`.
   */
  vertex?: boolean;
  /** A body-level `anthropic_version` for other hosts (e.g. `bedrock-2023-05-31`); implies no `model` field. */
  anthropicVersion?: string;
}

type Block = JsonObject;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

function bad(message: string, param: string): never {
  throw Errors.badRequest(`${param}: ${message}`, param);
}

/** `cache_control` on a part or tool is passed along (Anthropic prompt caching); nothing else extra is. */
function withCache(block: Block, source: JsonObject): Block {
  return isObject(source.cache_control) ? { ...block, cache_control: source.cache_control } : block;
}

/** A data URL or an http(s) URL as an Anthropic image / document source. */
function mediaSource(url: string, param: string): { source: JsonObject; mediaType: string | undefined } {
  const data = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  if (data) return { source: { type: 'base64', media_type: data[1] as string, data: data[2] as string }, mediaType: data[1] };
  if (/^https?:\/\//i.test(url)) return { source: { type: 'url', url }, mediaType: undefined };
  return bad('must be a base64 data URL or an http(s) URL', param);
}

function imageBlock(part: JsonObject, param: string): Block {
  const imageUrl = part.image_url;
  const url = typeof imageUrl === 'string' ? imageUrl : isObject(imageUrl) ? str(imageUrl.url) : undefined;
  if (url === undefined) bad('an image_url part needs image_url.url', `${param}.image_url.url`);
  const { source, mediaType } = mediaSource(url, `${param}.image_url.url`);
  if (mediaType !== undefined && !IMAGE_TYPES.has(mediaType))
    bad(`image type ${mediaType} is not supported (jpeg, png, gif, webp)`, `${param}.image_url.url`);
  return withCache({ type: 'image', source }, part);
}

function fileBlock(part: JsonObject, param: string): Block {
  const file = isObject(part.file) ? part.file : {};
  const data = str(file.file_data);
  if (data === undefined) bad('only inline file_data (a base64 data URL) is supported', `${param}.file`);
  const { source, mediaType } = mediaSource(data, `${param}.file.file_data`);
  if (mediaType !== undefined && IMAGE_TYPES.has(mediaType)) return withCache({ type: 'image', source }, part);
  if (mediaType !== 'application/pdf') bad(`file type ${String(mediaType)} is not supported (PDF or an image)`, `${param}.file.file_data`);
  return withCache(compact({ type: 'document', source, title: str(file.filename) }), part);
}

function textBlock(part: JsonObject): Block | undefined {
  const text = str(part.text) ?? str(part.refusal);
  return text ? withCache({ type: 'text', text }, part) : undefined;
}

/** Content parts of a user message (or of a tool result): text, images, PDF files. */
function userBlocks(content: Json | undefined, param: string): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  content.forEach((part, i) => {
    const p = `${param}[${i}]`;
    if (!isObject(part)) bad('a content part must be an object', p);
    switch (part.type) {
      case 'text': {
        const block = textBlock(part);
        if (block) out.push(block);
        break;
      }
      case 'image_url':
        out.push(imageBlock(part, p));
        break;
      case 'file':
        out.push(fileBlock(part, p));
        break;
      default:
        bad(`content part type ${JSON.stringify(part.type)} is not supported by anthropic`, `${p}.type`);
    }
  });
  return out;
}

function textOf(content: Json | undefined): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): Block[] => {
    const block = isObject(part) && (part.type === 'text' || part.type === 'refusal') ? textBlock(part) : undefined;
    return block ? [block] : [];
  });
}

function parseArguments(args: Json | undefined, param: string): JsonObject {
  if (args === undefined || args === null || args === '') return {};
  if (isObject(args)) return args;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(args));
  } catch {
    return bad('must be a JSON object', param);
  }
  return isObject(parsed) ? parsed : bad('must be a JSON object', param);
}

/** The id given to a legacy `function_call` (which has none) so that the following `function` result can refer to it. */
function legacyCallId(messageIndex: number): string {
  return `call_function_${messageIndex}`;
}

interface Converted {
  system: Block[];
  messages: JsonObject[];
}

function convertMessages(raw: Json | undefined, thinkingAllowed: boolean): Converted {
  if (!Array.isArray(raw)) bad('must be an array', 'messages');
  const system: Block[] = [];
  const messages: JsonObject[] = [];
  /** The user message holding tool results, while consecutive tool messages keep coming. */
  let results: Block[] | undefined;
  let lastLegacyId: string | undefined;

  raw.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isObject(message)) bad('a message must be an object', param);
    const role = message.role;
    if (role !== 'tool' && role !== 'function') results = undefined;
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...textOf(message.content));
        break;
      case 'user': {
        const content = message.content;
        if (typeof content === 'string') messages.push({ role: 'user', content });
        else messages.push({ role: 'user', content: userBlocks(content, `${param}.content`) });
        break;
      }
      case 'assistant': {
        const blocks: Block[] = [];
        if (thinkingAllowed && Array.isArray(message.content)) {
          // Thinking blocks handed back (with their signature) must come first in the assistant turn.
          for (const part of message.content) {
            if (!isObject(part)) continue;
            if (part.type === 'thinking' && typeof part.thinking === 'string' && typeof part.signature === 'string')
              blocks.push({ type: 'thinking', thinking: part.thinking, signature: part.signature });
            else if (part.type === 'redacted_thinking' && typeof part.data === 'string') blocks.push({ type: 'redacted_thinking', data: part.data });
          }
        }
        blocks.push(...textOf(message.content));
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        calls.forEach((call, j) => {
          const p = `${param}.tool_calls[${j}]`;
          if (!isObject(call) || !isObject(call.function)) bad('a tool call needs a function', p);
          const name = str(call.function.name) ?? bad('a tool call needs function.name', `${p}.function.name`);
          const id = str(call.id) ?? bad('a tool call needs an id', `${p}.id`);
          blocks.push({ type: 'tool_use', id, name, input: parseArguments(call.function.arguments, `${p}.function.arguments`) });
        });
        if (isObject(message.function_call)) {
          const fc = message.function_call;
          const name = str(fc.name) ?? bad('function_call needs a name', `${param}.function_call.name`);
          lastLegacyId = legacyCallId(i);
          blocks.push({ type: 'tool_use', id: lastLegacyId, name, input: parseArguments(fc.arguments, `${param}.function_call.arguments`) });
        }
        if (!blocks.length) break; // an empty assistant turn carries nothing Anthropic would accept
        const onlyText = blocks.length === 1 && blocks[0]?.type === 'text' && !('cache_control' in (blocks[0] as Block));
        messages.push({ role: 'assistant', content: onlyText ? ((blocks[0] as Block).text as string) : blocks });
        break;
      }
      case 'tool':
      case 'function': {
        const id =
          role === 'tool'
            ? (str(message.tool_call_id) ?? bad('a tool message needs tool_call_id', `${param}.tool_call_id`))
            : (lastLegacyId ?? `call_function_${str(message.name) ?? i}`);
        const content = message.content;
        const result: Block = { type: 'tool_result', tool_use_id: id };
        if (typeof content === 'string') result.content = content;
        else if (Array.isArray(content)) result.content = userBlocks(content, `${param}.content`);
        if (results) results.push(result);
        else {
          // Consecutive tool results travel together in one user turn, right after the assistant's tool_use blocks.
          results = [result];
          messages.push({ role: 'user', content: results });
        }
        break;
      }
      default:
        bad(`role ${JSON.stringify(role)} is not supported`, `${param}.role`);
    }
  });
  return { system, messages };
}

function toolFrom(fn: JsonObject, source: JsonObject): Block {
  const parameters = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
  return withCache(compact({ name: str(fn.name) ?? '', description: str(fn.description), input_schema: parameters }), source);
}

function convertTools(body: JsonObject): Block[] {
  if (Array.isArray(body.tools) && body.tools.length)
    return body.tools.flatMap((tool) => (isObject(tool) && isObject(tool.function) ? [toolFrom(tool.function, tool)] : []));
  if (Array.isArray(body.functions)) return body.functions.flatMap((fn) => (isObject(fn) ? [toolFrom(fn, fn)] : []));
  return [];
}

/** OpenAI tool_choice (or legacy function_call) → Anthropic tool_choice, without parallel settings. */
function convertToolChoice(body: JsonObject): JsonObject | undefined {
  const choice = body.tool_choice ?? (Array.isArray(body.tools) && body.tools.length ? undefined : body.function_call);
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  if (isObject(choice)) {
    const name = isObject(choice.function) ? str(choice.function.name) : str(choice.name);
    if (name !== undefined) return { type: 'tool', name };
  }
  return undefined;
}

/** The JSON tool for `response_format` json_object / json_schema, or undefined for text. */
function jsonTool(body: JsonObject): Block | undefined {
  const format = body.response_format;
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object')
    return { name: JSON_TOOL_NAME, description: 'Give your final answer as a JSON object.', input_schema: { type: 'object' } };
  if (format.type !== 'json_schema') return undefined;
  const spec = isObject(format.json_schema) ? format.json_schema : {};
  const schema = isObject(spec.schema) ? spec.schema : undefined;
  // Anthropic's input_schema must be an object schema; OpenAI's structured outputs demand an object root as well.
  const inputSchema = schema && (schema.type === 'object' || schema.type === undefined) ? { ...schema, type: 'object' } : { type: 'object' };
  return {
    name: JSON_TOOL_NAME,
    description: str(spec.description) ?? `Give your final answer as JSON${str(spec.name) ? ` (${str(spec.name)})` : ''} matching this schema.`,
    input_schema: inputSchema,
  };
}

function stopSequences(stop: Json | undefined): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop)) {
    const list = stop.filter((s): s is string => typeof s === 'string');
    return list.length ? list : undefined;
  }
  return undefined;
}

function maxTokens(body: JsonObject, thinking: JsonObject | undefined): number {
  const given = body.max_completion_tokens ?? body.max_tokens;
  if (typeof given === 'number') return given;
  // Anthropic needs max_tokens above the thinking budget.
  const budget = thinking && typeof thinking.budget_tokens === 'number' ? thinking.budget_tokens : 0;
  return budget >= DEFAULT_MAX_TOKENS ? budget + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS;
}

/**
 * The Anthropic Messages API body for an OpenAI chat completion body.
 *
 * - system and developer messages → `system` text blocks; user text / image (data URL → base64 source, http URL →
 *   url source) / PDF file parts → content blocks; assistant text and tool_calls → text and tool_use blocks; tool
 *   messages → tool_result blocks in one user turn (consecutive results merged); legacy function_call / function
 *   messages likewise.
 * - tools / functions → tools; tool_choice auto/none/required/{function} → auto/none/any/tool;
 *   parallel_tool_calls false → disable_parallel_tool_use.
 * - response_format json_object / json_schema → the forced `json_response` tool (see JSON_TOOL_NAME).
 * - stop → stop_sequences; max_completion_tokens ?? max_tokens ?? 4096 → max_tokens; temperature, top_p, top_k;
 *   user → metadata.user_id; `thinking` only when strict_wire_compliance is false.
 * - Fields Anthropic does not have (n, seed, logprobs, penalties, logit_bias, stream_options…) are not sent.
 */
export function toAnthropicRequest(
  body: JsonObject,
  _target: TargetConfig,
  ctx: TranslateContext,
  opts: AnthropicRequestOptions = {},
): JsonObject {
  const thinkingAllowed = ctx.strictWireCompliance === false;
  const thinking = thinkingAllowed && isObject(body.thinking) ? body.thinking : undefined;
  const thinkingOn = thinking !== undefined && thinking.type !== 'disabled';
  const { system, messages } = convertMessages(body.messages, thinkingAllowed);

  const tools = convertTools(body);
  let toolChoice = tools.length ? convertToolChoice(body) : undefined;
  const json = jsonTool(body);
  if (json) {
    const clientToolsOffered = tools.length > 0 && toolChoice?.type !== 'none';
    tools.push(json);
    if (!clientToolsOffered && !thinkingOn) toolChoice = { type: 'tool', name: JSON_TOOL_NAME };
    else {
      // Forcing a tool is not allowed with thinking, and would hide the client's own tools: ask for it instead.
      if (toolChoice?.type === 'none' || toolChoice === undefined) toolChoice = { type: 'auto' };
      system.push({ type: 'text', text: `When you give your final answer, give it by calling the ${JSON_TOOL_NAME} tool.` });
    }
  }
  if (body.parallel_tool_calls === false && tools.length && toolChoice?.type !== 'none')
    toolChoice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };

  const legacyFunctions = !(Array.isArray(body.tools) && body.tools.length) && Array.isArray(body.functions) && body.functions.length > 0;
  const streamOptions = isObject(body.stream_options) ? body.stream_options : undefined;
  rememberFacts(ctx, { includeUsage: body.stream === true && streamOptions?.include_usage === true, legacyFunctions });

  const version = opts.anthropicVersion ?? (opts.vertex ? VERTEX_ANTHROPIC_VERSION : undefined);
  const user = str(body.user);
  return compact({
    anthropic_version: version,
    model: version === undefined ? (body.model ?? undefined) : undefined,
    system: system.length ? system : undefined,
    messages,
    max_tokens: maxTokens(body, thinking),
    stop_sequences: stopSequences(body.stop),
    temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
    top_p: typeof body.top_p === 'number' ? body.top_p : undefined,
    top_k: typeof body.top_k === 'number' ? body.top_k : undefined,
    tools: tools.length ? tools : undefined,
    tool_choice: toolChoice,
    thinking: thinking,
    metadata: user !== undefined ? { user_id: user } : undefined,
    stream: body.stream === true ? true : undefined,
  });
}
