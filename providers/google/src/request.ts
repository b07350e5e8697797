/**
 * OpenAI chat request → Gemini `generateContent` body (the same body serves Vertex AI's Gemini models). Pure: the
 * body it is given is never changed.
 *
 * Messages: system and developer messages, wherever they stand, become `systemInstruction`; user turns keep text,
 * images (`inlineData` from data URLs; an http(s) or gs:// URL becomes `fileData` with a MIME type guessed from
 * its extension, image/jpeg when there is none), audio and files; assistant turns (role `model`) keep their text and
 * turn `tool_calls` into `functionCall` parts, with the Gemini thought signature carried back from
 * `extra_content.google.thought_signature`; tool (and legacy function) results become `functionResponse` parts of a
 * user turn, named after the call they answer. Consecutive turns of one role are merged, as Gemini wants turns to
 * alternate.
 */
import { Errors, type Json, type JsonObject } from '@gateway/sdk';
import { toGeminiParameters, toGeminiSchema } from './schema.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What Gemini 3 accepts in place of a thought signature that was lost (a history from elsewhere). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiRequestOptions {
  /**
   * The model name, used only to decide whether a function call without its thought signature needs the
   * placeholder (Gemini 3 models refuse such history).
   */
  model?: string;
  /**
   * Whether thought summaries may be asked for (`thinkingConfig.includeThoughts`): only when the config allows extra
   * reasoning output (`strict_wire_compliance` false). The thinking budget is sent either way.
   */
  includeThoughts?: boolean;
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  bmp: 'image/bmp',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  csv: 'text/csv',
  json: 'application/json',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mov: 'video/quicktime',
  webm: 'video/webm',
};

/** A MIME type from a URL or file name's extension (query and fragment ignored). */
export function guessMimeType(url: string, fallback = 'image/jpeg'): string {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && MIME_BY_EXTENSION[ext]) || fallback;
}

/** `data:<mime>[;base64],<data>` → inline data; undefined when the string is not a data URL. */
function fromDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const m = /^data:([^,]*?),(.*)$/s.exec(url);
  if (!m) return undefined;
  const meta = (m[1] as string).split(';');
  const mimeType = meta[0] || 'text/plain';
  const payload = m[2] as string;
  if (meta.includes('base64')) return { mimeType, data: payload };
  return { mimeType, data: Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
}

function mediaPart(url: string, fallbackMime: string): JsonObject {
  const inline = fromDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mimeType, data: inline.data } };
  return { fileData: { mimeType: guessMimeType(url, fallbackMime), fileUri: url } };
}

/** One OpenAI content part as Gemini parts (none for parts Gemini has no use for, such as a refusal). */
function contentPart(part: Json): JsonObject[] {
  if (typeof part === 'string') return part ? [{ text: part }] : [];
  if (!isObject(part)) return [];
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' && part.text !== '' ? [{ text: part.text }] : [];
    case 'image_url': {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isObject(image) && typeof image.url === 'string' ? image.url : undefined;
      if (!url) throw Errors.badRequest('image_url.url must be a string', 'messages');
      return [mediaPart(url, 'image/jpeg')];
    }
    case 'input_audio': {
      const audio = isObject(part.input_audio) ? part.input_audio : {};
      if (typeof audio.data !== 'string') throw Errors.badRequest('input_audio.data must be a base64 string', 'messages');
      const format = typeof audio.format === 'string' ? audio.format : 'wav';
      return [{ inlineData: { mimeType: format === 'mp3' ? 'audio/mpeg' : `audio/${format}`, data: audio.data } }];
    }
    case 'file': {
      const file = isObject(part.file) ? part.file : {};
      const name = typeof file.filename === 'string' ? file.filename : '';
      if (typeof file.file_data === 'string') {
        const inline = fromDataUrl(file.file_data);
        return [{ inlineData: inline ?? { mimeType: guessMimeType(name, 'application/pdf'), data: file.file_data } }];
      }
      if (typeof file.file_id === 'string') return [{ fileData: { mimeType: guessMimeType(name || file.file_id, 'application/pdf'), fileUri: file.file_id } }];
      throw Errors.badRequest('a file part needs file_data or file_id', 'messages');
    }
    default:
      return [];
  }
}

function contentParts(content: Json | undefined): JsonObject[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (Array.isArray(content)) return content.flatMap(contentPart);
  return [];
}

/** The text of a message's content (string, or the text of its parts). */
export function contentText(content: Json | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (typeof p === 'string' ? p : isObject(p) && typeof p.text === 'string' ? p.text : ''))
    .join('');
}

function parseArguments(args: Json | undefined, name: string): JsonObject {
  if (isObject(args)) return args;
  if (typeof args !== 'string' || args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw Errors.badRequest(`the arguments of tool call ${name} are not valid JSON`, 'messages');
  }
  // functionCall.args is a JSON object (a Struct); anything else is wrapped so it is not lost.
  return isObject(parsed) ? parsed : { value: parsed as Json };
}

/** A tool result as a functionResponse `response` (a JSON object): a JSON object result as it is, else `{output}`. */
function functionResponseBody(content: Json | undefined): JsonObject {
  const text = contentText(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // not JSON: sent as text
  }
  return { output: text };
}

function needsSignaturePlaceholder(model: string | undefined): boolean {
  return typeof model === 'string' && /(^|[/.])gemini-3/i.test(model);
}

interface Turn {
  role: 'user' | 'model';
  parts: JsonObject[];
}

function buildContents(messages: Json[], opts: GeminiRequestOptions): { contents: Turn[]; system: JsonObject[] } {
  const system: JsonObject[] = [];
  const contents: Turn[] = [];
  /** tool_call id → function name, from the assistant messages seen so far. */
  const callNames = new Map<string, string>();
  const push = (role: Turn['role'], parts: JsonObject[]) => {
    if (!parts.length) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts = [...last.parts, ...parts];
    else contents.push({ role, parts });
  };

  messages.forEach((message, i) => {
    if (!isObject(message)) throw Errors.badRequest(`messages[${i}] must be an object`, 'messages');
    const role = message.role;
    switch (role) {
      case 'system':
      case 'developer': {
        const text = contentText(message.content);
        if (text) system.push({ text });
        return;
      }
      case 'user':
        push('user', contentParts(message.content));
        return;
      case 'assistant': {
        const parts = contentParts(message.content).filter((p) => 'text' in p);
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        let first = true;
        for (const call of calls) {
          if (!isObject(call) || !isObject(call.function)) continue;
          const name = typeof call.function.name === 'string' ? call.function.name : '';
          if (typeof call.id === 'string') callNames.set(call.id, name);
          const part: JsonObject = { functionCall: { name, args: parseArguments(call.function.arguments, name) } };
          const extra = isObject(call.extra_content) && isObject(call.extra_content.google) ? call.extra_content.google : undefined;
          const signature = typeof extra?.thought_signature === 'string' ? extra.thought_signature : undefined;
          if (signature) part.thoughtSignature = signature;
          else if (first && needsSignaturePlaceholder(opts.model)) part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
          first = false;
          parts.push(part);
        }
        const legacy = message.function_call;
        if (isObject(legacy) && typeof legacy.name === 'string')
          parts.push({ functionCall: { name: legacy.name, args: parseArguments(legacy.arguments, legacy.name) } });
        push('model', parts);
        return;
      }
      case 'tool': {
        const id = typeof message.tool_call_id === 'string' ? message.tool_call_id : undefined;
        const name = (id !== undefined ? callNames.get(id) : undefined) ?? (typeof message.name === 'string' ? message.name : undefined);
        if (name === undefined)
          throw Errors.badRequest(`messages[${i}]: tool_call_id ${JSON.stringify(id ?? null)} answers no tool call of an earlier assistant message`, 'messages');
        push('user', [{ functionResponse: { name, response: functionResponseBody(message.content) } }]);
        return;
      }
      case 'function': {
        const name = typeof message.name === 'string' ? message.name : undefined;
        if (!name) throw Errors.badRequest(`messages[${i}]: a function message needs its name`, 'messages');
        push('user', [{ functionResponse: { name, response: functionResponseBody(message.content) } }]);
        return;
      }
      default:
        throw Errors.badRequest(`messages[${i}]: unknown role ${JSON.stringify(role ?? null)}`, 'messages');
    }
  });
  return { contents, system };
}

function functionDeclaration(fn: JsonObject): JsonObject {
  const decl: JsonObject = { name: typeof fn.name === 'string' ? fn.name : '' };
  if (typeof fn.description === 'string') decl.description = fn.description;
  const parameters = toGeminiParameters(fn.parameters);
  if (parameters) decl.parameters = parameters;
  return decl;
}

function buildTools(body: JsonObject): JsonObject[] | undefined {
  const declarations: JsonObject[] = [];
  const builtIn: JsonObject[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(tool)) continue;
    if (tool.type === 'function' && isObject(tool.function)) declarations.push(functionDeclaration(tool.function));
    // Gemini's own tools, by their OpenAI-style type names.
    else if (tool.type === 'google_search') builtIn.push({ googleSearch: {} });
    else if (tool.type === 'code_execution') builtIn.push({ codeExecution: {} });
  }
  for (const fn of Array.isArray(body.functions) ? body.functions : []) if (isObject(fn)) declarations.push(functionDeclaration(fn));
  const tools: JsonObject[] = [];
  if (declarations.length) tools.push({ functionDeclarations: declarations });
  tools.push(...builtIn);
  return tools.length ? tools : undefined;
}

function buildToolConfig(body: JsonObject): JsonObject | undefined {
  const choice = body.tool_choice ?? body.function_call;
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isObject(choice)) {
    const fn = isObject(choice.function) ? choice.function : choice;
    if (typeof fn.name === 'string') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [fn.name] } };
  }
  return undefined;
}

function buildGenerationConfig(body: JsonObject, opts: GeminiRequestOptions): JsonObject | undefined {
  const config: JsonObject = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.top_k === 'number') config.topK = body.top_k;
  if (typeof body.n === 'number' && body.n !== 1) config.candidateCount = body.n;
  if (typeof body.seed === 'number') config.seed = body.seed;
  if (typeof body.presence_penalty === 'number') config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') config.frequencyPenalty = body.frequency_penalty;
  if (body.logprobs === true) {
    config.responseLogprobs = true;
    if (typeof body.top_logprobs === 'number') config.logprobs = body.top_logprobs;
  }
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((s) => typeof s === 'string') : [];
  if (stop.length) config.stopSequences = stop;

  const format = body.response_format;
  if (isObject(format)) {
    if (format.type === 'json_object') config.responseMimeType = 'application/json';
    else if (format.type === 'json_schema') {
      config.responseMimeType = 'application/json';
      const spec = isObject(format.json_schema) ? format.json_schema : {};
      if (isObject(spec.schema)) config.responseSchema = toGeminiSchema(spec.schema);
    }
  }

  const thinking = body.thinking;
  if (isObject(thinking)) {
    if (thinking.type === 'enabled') {
      const thinkingConfig: JsonObject = {};
      if (typeof thinking.budget_tokens === 'number') thinkingConfig.thinkingBudget = thinking.budget_tokens;
      if (opts.includeThoughts) thinkingConfig.includeThoughts = true;
      if (Object.keys(thinkingConfig).length) config.thinkingConfig = thinkingConfig;
    } else if (thinking.type === 'disabled') config.thinkingConfig = { thinkingBudget: 0 };
  }
  return Object.keys(config).length ? config : undefined;
}

/** The Gemini `generateContent` body for an OpenAI chat request. */
export function toGeminiRequest(body: JsonObject, opts: GeminiRequestOptions = {}): JsonObject {
  if (!Array.isArray(body.messages)) throw Errors.badRequest('messages must be an array', 'messages');
  const model = opts.model ?? (typeof body.model === 'string' ? body.model : undefined);
  const { contents, system } = buildContents(body.messages, { ...opts, model });
  const out: JsonObject = { contents: contents.map((t) => ({ role: t.role, parts: t.parts })) };
  if (system.length) out.systemInstruction = { parts: system };
  const tools = buildTools(body);
  if (tools) out.tools = tools;
  const toolConfig = buildToolConfig(body);
  if (toolConfig && tools) out.toolConfig = toolConfig;
  const generationConfig = buildGenerationConfig(body, opts);
  if (generationConfig) out.generationConfig = generationConfig;
  // Gemini-specific settings a client may send beside the OpenAI fields.
  const safety = body.safety_settings ?? body.safetySettings;
  if (Array.isArray(safety)) out.safetySettings = safety;
  const cached = body.cached_content ?? body.cachedContent;
  if (typeof cached === 'string') out.cachedContent = cached;
  return out;
}
