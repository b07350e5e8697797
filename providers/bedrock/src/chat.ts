/**
 * OpenAI chat completions ⇄ Bedrock Converse (POST /model/{modelId}/converse).
 *
 * Request: `messages` of content blocks (`text`, `image`, `document`, `toolUse`, `toolResult`) in strictly
 * alternating user/assistant turns, `system` blocks, `inferenceConfig` {maxTokens, temperature, topP,
 * stopSequences}, `toolConfig` {tools: [{toolSpec: {name, description, inputSchema: {json}}}], toolChoice}, and
 * `outputConfig.textFormat` for JSON-schema output.
 * Answer: `output.message` (role, content blocks), `stopReason`, `usage` {inputTokens, outputTokens, totalTokens,
 * cacheReadInputTokens, cacheWriteInputTokens}. Per the prompt-caching guide, `inputTokens` counts only the input
 * that was not read from or written to the cache, so OpenAI's `prompt_tokens` is the sum of the three.
 *
 * JSON mode (`response_format: json_object`), the documented "structured output through tool use" approach: a tool
 * named `gateway_json_response` whose input schema is any object, forced with `toolChoice` where the model family
 * accepts it; the tool's input comes back as the message content and the finish reason is `stop`. Families without
 * `toolChoice` get Bedrock's native `outputConfig.textFormat` with an open object schema instead. `json_schema` always
 * uses `outputConfig.textFormat` (native structured output), with the client's schema.
 */
import { Errors, type Json, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { chatQuirks, type ChatQuirks, modelFamily } from './models.ts';

/** The tool that carries a JSON-mode answer. Its name tells the answer's translation what the call is. */
export const JSON_TOOL = 'gateway_json_response';

type Block = JsonObject;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const bad = (message: string, param: string | null = null) => Errors.badRequest(message, param);

// ---- content -------------------------------------------------------------------------------------------------

/** The text of a message whose content may only be text (system, developer, tool): a string or text parts. */
function textOf(content: unknown, where: string): string[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) throw bad(`${where}.content must be a string or an array of content parts`, `${where}.content`);
  return content.map((part, i) => {
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
    throw bad(`${where}.content[${i}]: only text parts are accepted here`, `${where}.content`);
  });
}

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** `data:<mime>;base64,<bytes>` → mime and base64 text (the JSON form of a Converse `bytes` blob is base64). */
function dataUrl(url: string, where: string): { mime: string; base64: string } {
  const match = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match || !/;base64/i.test(match[2] ?? '')) {
    throw bad(`${where}: Bedrock takes inline media only; send it as a base64 data URL (data:<type>;base64,…)`, where);
  }
  const base64 = (match[3] ?? '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw bad(`${where}: the data URL is not valid base64`, where);
  return { mime: (match[1] ?? '').toLowerCase(), base64 };
}

/** Document names may hold letters, digits, single spaces, hyphens, parentheses and square brackets. */
function documentName(filename: unknown, n: number): string {
  const stem = typeof filename === 'string' ? filename.replace(/\.[^.]*$/, '') : '';
  const clean = stem.replace(/[^A-Za-z0-9 ()[\]-]+/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
  return clean || `document-${n}`;
}

function userBlocks(content: unknown, where: string, counter: { documents: number }): Block[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) throw bad(`${where}.content must be a string or an array of content parts`, `${where}.content`);
  return content.map((part, i): Block => {
    const at = `${where}.content[${i}]`;
    if (!isObject(part)) throw bad(`${at} must be an object`, `${where}.content`);
    if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
    if (part.type === 'image_url') {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isObject(image) && typeof image.url === 'string' ? image.url : undefined;
      if (url === undefined) throw bad(`${at}.image_url.url is required`, `${where}.content`);
      const { mime, base64 } = dataUrl(url, `${at}.image_url.url`);
      const format = IMAGE_FORMATS[mime];
      if (!format) throw bad(`${at}: image type ${mime} is not one Bedrock accepts (png, jpeg, gif, webp)`, `${where}.content`);
      return { image: { format, source: { bytes: base64 } } };
    }
    if (part.type === 'file' && isObject(part.file)) {
      const file = part.file;
      if (typeof file.file_data !== 'string') throw bad(`${at}: Bedrock takes documents inline; send file.file_data as a data URL`, `${where}.content`);
      const { mime, base64 } = dataUrl(file.file_data, `${at}.file.file_data`);
      const format = DOCUMENT_FORMATS[mime];
      if (!format) throw bad(`${at}: document type ${mime} is not one Bedrock accepts`, `${where}.content`);
      counter.documents += 1;
      return { document: { format, name: documentName(file.filename, counter.documents), source: { bytes: base64 } } };
    }
    throw bad(`${at}: content part type ${JSON.stringify(part.type)} is not supported by Bedrock`, `${where}.content`);
  });
}

/** Bedrock tool-use ids match [a-zA-Z0-9_-]{1,64}; other ids are mapped the same way wherever they appear. */
function toolUseId(id: unknown, where: string): string {
  if (typeof id !== 'string' || id === '') throw bad(`${where} must be a non-empty string`, where);
  const clean = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return clean.length <= 64 ? clean : clean.slice(0, 64);
}

function toolInput(args: unknown, where: string): Json {
  if (args === undefined || args === null || args === '') return {};
  if (typeof args !== 'string') throw bad(`${where} must be a JSON string`, where);
  try {
    return JSON.parse(args) as Json;
  } catch {
    throw bad(`${where} is not valid JSON`, where);
  }
}

// ---- messages --------------------------------------------------------------------------------------------------

interface Conversation {
  system: string[];
  turns: Turn[];
  /** Tool names used by toolUse blocks of the history (Bedrock wants a toolConfig whenever such blocks appear). */
  historyTools: Set<string>;
}

function conversation(messages: unknown, thinkingAllowed: boolean): Conversation {
  if (!Array.isArray(messages)) throw bad('messages must be an array', 'messages');
  const system: string[] = [];
  const turns: Turn[] = [];
  const historyTools = new Set<string>();
  const counter = { documents: 0 };
  const push = (role: Turn['role'], content: Block[]) => {
    if (!content.length) return;
    const last = turns[turns.length - 1];
    // Converse requires alternating roles: consecutive messages of one role (parallel tool results, a user note
    // after them) become one turn.
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };

  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    if (!isObject(message)) throw bad(`${where} must be an object`, 'messages');
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content, where).join('\n');
        if (text) system.push(text);
        return;
      }
      case 'user':
        return push('user', userBlocks(message.content, where, counter));
      case 'assistant': {
        const blocks: Block[] = [];
        const content = message.content;
        if (typeof content === 'string') {
          if (content.trim()) blocks.push({ text: content });
        } else if (Array.isArray(content)) {
          content.forEach((part, j) => {
            if (!isObject(part)) throw bad(`${where}.content[${j}] must be an object`, 'messages');
            if (part.type === 'text' && typeof part.text === 'string') {
              if (part.text.trim()) blocks.push({ text: part.text });
            } else if (thinkingAllowed && part.type === 'thinking' && typeof part.thinking === 'string' && typeof part.signature === 'string') {
              // Thinking handed back with its signature (as the anthropic provider takes it), Converse's reasoning block.
              blocks.push({ reasoningContent: { reasoningText: { text: part.thinking, signature: part.signature } } });
            } else if (thinkingAllowed && part.type === 'redacted_thinking' && typeof part.data === 'string') {
              blocks.push({ reasoningContent: { redactedContent: part.data } });
            } else if (part.type !== 'refusal') throw bad(`${where}.content[${j}]: only text parts are accepted in assistant messages`, 'messages');
          });
        } else if (content !== null && content !== undefined) throw bad(`${where}.content must be a string, an array or null`, 'messages');
        const calls = message.tool_calls;
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) throw bad(`${where}.tool_calls must be an array`, 'messages');
          calls.forEach((call, j) => {
            const at = `${where}.tool_calls[${j}]`;
            if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') {
              throw bad(`${at} must have function.name`, 'messages');
            }
            historyTools.add(call.function.name);
            blocks.push({
              toolUse: {
                toolUseId: toolUseId(call.id, `${at}.id`),
                name: call.function.name,
                input: toolInput(call.function.arguments, `${at}.function.arguments`),
              },
            });
          });
        }
        // The legacy single function call.
        const legacy = message.function_call;
        if (isObject(legacy) && typeof legacy.name === 'string') {
          historyTools.add(legacy.name);
          blocks.push({
            toolUse: {
              toolUseId: toolUseId(`function_${legacy.name}`, `${where}.function_call.name`),
              name: legacy.name,
              input: toolInput(legacy.arguments, `${where}.function_call.arguments`),
            },
          });
        }
        return push('assistant', blocks);
      }
      case 'tool': {
        const text = textOf(message.content, where);
        return push('user', [
          {
            toolResult: {
              toolUseId: toolUseId(message.tool_call_id, `${where}.tool_call_id`),
              content: (text.length ? text : ['']).map((t) => ({ text: t })),
            },
          },
        ]);
      }
      case 'function': {
        if (typeof message.name !== 'string') throw bad(`${where}.name is required for a function message`, 'messages');
        const text = textOf(message.content, where);
        return push('user', [
          {
            toolResult: {
              toolUseId: toolUseId(`function_${message.name}`, `${where}.name`),
              content: (text.length ? text : ['']).map((t) => ({ text: t })),
            },
          },
        ]);
      }
      default:
        throw bad(`${where}.role ${JSON.stringify(message.role)} is not supported`, 'messages');
    }
  });
  return { system, turns, historyTools };
}

// ---- tools -----------------------------------------------------------------------------------------------------

interface ToolSetup {
  toolConfig?: JsonObject;
  outputConfig?: JsonObject;
}

function toolSpec(tool: unknown, where: string): JsonObject {
  if (!isObject(tool)) throw bad(`${where} must be an object`, 'tools');
  if (tool.type !== undefined && tool.type !== 'function') throw bad(`${where}: tool type ${JSON.stringify(tool.type)} is not supported by Bedrock`, 'tools');
  const fn = tool.function;
  if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') throw bad(`${where}.function.name is required`, 'tools');
  const spec: JsonObject = { name: fn.name };
  if (typeof fn.description === 'string' && fn.description) spec.description = fn.description;
  const schema = isObject(fn.parameters) ? (fn.parameters as JsonObject) : { type: 'object', properties: {} };
  spec.inputSchema = { json: schema };
  return { toolSpec: spec };
}

/** OpenAI's tool_choice (or the legacy function_call) → Converse's, `undefined` meaning "leave it to the model". */
function toolChoiceOf(choice: unknown): { none: boolean; choice?: JsonObject } {
  if (choice === undefined || choice === null || choice === 'auto') return { none: false };
  if (choice === 'none') return { none: true };
  if (choice === 'required' || choice === 'any') return { none: false, choice: { any: {} } };
  if (isObject(choice)) {
    const fn = isObject(choice.function) ? choice.function : choice.type === undefined ? choice : undefined;
    if (fn && typeof fn.name === 'string') return { none: false, choice: { tool: { name: fn.name } } };
  }
  throw bad('tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}', 'tool_choice');
}

function outputSchema(schema: Json, name: string, description?: string): JsonObject {
  const jsonSchema: JsonObject = { schema: JSON.stringify(schema), name };
  if (description) jsonSchema.description = description;
  return { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
}

function toolSetup(body: JsonObject, history: Set<string>, quirks: ChatQuirks): ToolSetup {
  const rawTools = Array.isArray(body.tools)
    ? body.tools
    : Array.isArray(body.functions)
      ? body.functions.map((fn) => ({ type: 'function', function: fn }))
      : [];
  const picked = toolChoiceOf(body.tool_choice !== undefined ? body.tool_choice : body.function_call);
  let tools: JsonObject[] = picked.none ? [] : rawTools.map((tool, i) => toolSpec(tool, `tools[${i}]`));
  let choice = tools.length ? picked.choice : undefined;
  let outputConfig: JsonObject | undefined;

  const format = body.response_format;
  if (isObject(format) && format.type === 'json_object') {
    if (quirks.toolChoiceAny || quirks.toolChoiceTool) {
      tools = [
        ...tools,
        {
          toolSpec: {
            name: JSON_TOOL,
            description: 'Give the answer as a JSON object: the input of this tool is the whole answer.',
            inputSchema: { json: { type: 'object' } },
          },
        },
      ];
      // With tools of its own the model must call one of them or the JSON tool; alone, the JSON tool.
      if (tools.length === 1) choice = quirks.toolChoiceTool ? { tool: { name: JSON_TOOL } } : { any: {} };
      else if (!choice || 'any' in choice) choice = { any: {} };
    } else {
      outputConfig = outputSchema({ type: 'object' }, 'json_object');
    }
  } else if (isObject(format) && format.type === 'json_schema') {
    const spec = isObject(format.json_schema) ? format.json_schema : {};
    const schema = (isObject(spec.schema) ? spec.schema : { type: 'object' }) as Json;
    const name = typeof spec.name === 'string' && spec.name ? spec.name : 'response';
    outputConfig = outputSchema(schema, name, typeof spec.description === 'string' ? spec.description : undefined);
  } else if (format !== undefined && format !== null && !(isObject(format) && format.type === 'text')) {
    throw bad('response_format must be {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", …}', 'response_format');
  }

  // Bedrock refuses toolUse/toolResult blocks in a request without a toolConfig: when the client sent none (or
  // tool_choice "none"), the tools the history used are declared with an open schema.
  if (!tools.length && history.size) {
    tools = [...history].map((name) => ({
      toolSpec: { name, description: 'A tool used earlier in this conversation.', inputSchema: { json: { type: 'object' } } },
    }));
  }
  const setup: ToolSetup = {};
  if (tools.length) setup.toolConfig = choice ? { tools, toolChoice: choice } : { tools };
  if (outputConfig) setup.outputConfig = outputConfig;
  return setup;
}

// ---- the request -----------------------------------------------------------------------------------------------

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Claude's default answer length when thinking is on and the client set none (the anthropic provider's). */
const THINKING_DEFAULT_MAX_TOKENS = 4096;

/**
 * The Converse body of a chat completion. `strictWireCompliance` false (as for the anthropic provider): a Claude
 * model's `thinking` goes in `additionalModelRequestFields` (Converse has no field of its own for it), with maxTokens
 * above the budget when the client set none, and thinking blocks of the history go back as reasoning blocks.
 */
export function converseRequest(body: JsonObject, ctx: Pick<TranslateContext, 'strictWireCompliance'> = { strictWireCompliance: true }): JsonObject {
  const model = typeof body.model === 'string' ? body.model : '';
  const quirks = chatQuirks(model);
  if (typeof body.n === 'number' && body.n > 1) throw bad('Bedrock returns one choice per call; n must be 1', 'n');
  const thinkingAllowed = ctx.strictWireCompliance === false && modelFamily(model) === 'anthropic';
  const thinking = thinkingAllowed && isObject(body.thinking) ? (body.thinking as JsonObject) : undefined;

  const { system, turns, historyTools } = conversation(body.messages, thinkingAllowed);
  const out: JsonObject = {};
  if (system.length) {
    if (quirks.system) out.system = system.map((text) => ({ text }));
    else {
      // Models without system prompts get the instructions at the head of the first user turn.
      const first = turns.find((t) => t.role === 'user');
      const block = { text: system.join('\n') };
      if (first) first.content.unshift(block);
      else turns.unshift({ role: 'user', content: [block] });
    }
  }
  out.messages = turns.map((t) => ({ role: t.role, content: t.content }));

  const inference: JsonObject = {};
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens);
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  else if (thinking && thinking.type === 'enabled') {
    // Claude needs max_tokens above the thinking budget.
    const budget = typeof thinking.budget_tokens === 'number' ? thinking.budget_tokens : 0;
    inference.maxTokens = budget >= THINKING_DEFAULT_MAX_TOKENS ? budget + THINKING_DEFAULT_MAX_TOKENS : THINKING_DEFAULT_MAX_TOKENS;
  }
  const temperature = num(body.temperature);
  if (temperature !== undefined) inference.temperature = temperature;
  const topP = num(body.top_p);
  if (topP !== undefined) inference.topP = topP;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((s): s is string => typeof s === 'string') : [];
  if (stop.length) inference.stopSequences = stop;
  if (Object.keys(inference).length) out.inferenceConfig = inference;

  const { toolConfig, outputConfig } = toolSetup(body, historyTools, quirks);
  if (toolConfig) out.toolConfig = toolConfig;
  if (outputConfig) out.outputConfig = outputConfig;
  if (thinking) out.additionalModelRequestFields = { thinking };
  return out;
}

// ---- the answer ------------------------------------------------------------------------------------------------

/** Bedrock stop reasons → OpenAI finish reasons. A JSON-mode answer arrives as a tool call but is a plain stop. */
export function finishReason(stopReason: string, jsonOnly: boolean): string {
  switch (stopReason) {
    case 'tool_use':
      return jsonOnly ? 'stop' : 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, malformed_model_output, malformed_tool_use and reasons added later.
      return 'stop';
  }
}

function count(value: unknown, where: string, required: boolean): number {
  if (value === undefined && !required) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`usage.${where} is not a token count`);
  return value;
}

/** Bedrock TokenUsage → OpenAI usage (prompt tokens include those read from and written to the cache). */
export function usageOf(usage: unknown): JsonObject {
  if (!isObject(usage)) throw new Error('usage is not an object');
  const input = count(usage.inputTokens, 'inputTokens', true);
  const output = count(usage.outputTokens, 'outputTokens', true);
  const cacheRead = count(usage.cacheReadInputTokens, 'cacheReadInputTokens', false);
  const cacheWrite = count(usage.cacheWriteInputTokens, 'cacheWriteInputTokens', false);
  const prompt = input + cacheRead + cacheWrite;
  const out: JsonObject = {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
  // OpenAI has no name for cache writes, which cost more than plain input: kept beside under Anthropic's name.
  if (cacheWrite > 0) out.cache_creation_input_tokens = cacheWrite;
  return out;
}

export function completionId(): string {
  return `chatcmpl-${crypto.randomUUID().replace(/-/g, '')}`;
}

/** A Converse answer → an OpenAI chat completion. Throws (→ 502) when the answer is not what Converse promises. */
export function converseResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json)) throw new Error('the Converse answer is not a JSON object');
  const output = json.output;
  if (!isObject(output) || !isObject(output.message)) throw new Error('the Converse answer has no output.message');
  const content = output.message.content;
  if (!Array.isArray(content)) throw new Error('output.message.content is not an array');
  if (typeof json.stopReason !== 'string') throw new Error('the Converse answer has no stopReason');

  let text = '';
  let reasoning = '';
  let jsonAnswer: string | undefined;
  const toolCalls: JsonObject[] = [];
  // As the anthropic provider gives them: text and thinking blocks, with the signatures a later turn hands back.
  const blocks: JsonObject[] = [];
  content.forEach((block, i) => {
    if (!isObject(block)) throw new Error(`output.message.content[${i}] is not an object`);
    if ('text' in block) {
      if (typeof block.text !== 'string') throw new Error(`output.message.content[${i}].text is not a string`);
      text += block.text;
      blocks.push({ type: 'text', text: block.text });
    } else if ('toolUse' in block) {
      const use = block.toolUse;
      if (!isObject(use) || typeof use.name !== 'string' || typeof use.toolUseId !== 'string') {
        throw new Error(`output.message.content[${i}].toolUse lacks name or toolUseId`);
      }
      const input = JSON.stringify(use.input ?? {});
      if (use.name === JSON_TOOL) jsonAnswer = input;
      else toolCalls.push({ id: use.toolUseId, type: 'function', function: { name: use.name, arguments: input } });
    } else if (isObject(block.reasoningContent)) {
      const rt = block.reasoningContent.reasoningText;
      if (isObject(rt) && typeof rt.text === 'string') {
        reasoning += rt.text;
        blocks.push({ type: 'thinking', thinking: rt.text, signature: typeof rt.signature === 'string' ? rt.signature : '' });
      } else if (typeof block.reasoningContent.redactedContent === 'string')
        blocks.push({ type: 'redacted_thinking', data: block.reasoningContent.redactedContent });
    }
    // Other blocks (citations, guard content, media) have nothing to carry into an OpenAI message.
  });

  const jsonOnly = jsonAnswer !== undefined && toolCalls.length === 0;
  // In JSON mode the JSON is the answer, whatever text the model put before its tool call.
  const finalText = jsonAnswer !== undefined ? jsonAnswer : text;
  const message: JsonObject = { role: 'assistant', content: toolCalls.length && !finalText ? null : finalText };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning && !ctx.strictWireCompliance) message.reasoning_content = reasoning;
  if (!ctx.strictWireCompliance && blocks.some((b) => b.type !== 'text')) message.content_blocks = blocks;

  const completion: JsonObject = {
    id: completionId(),
    object: 'chat.completion',
    created: ctx.now,
    model: ctx.model ?? '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(json.stopReason, jsonOnly) }],
  };
  if (json.usage !== undefined) completion.usage = usageOf(json.usage);
  return completion;
}
