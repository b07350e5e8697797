// The OpenAI API's endpoints for the mock: authentication, routing, request validation with the API's own error
// messages, and the deterministic answers. Returns a `Reply` (JSON, bytes or SSE events) that `openai-server.ts`
// renders, delays, cuts or replaces as a test's behavior says.

import * as fx from './openai-fixtures.ts';
import { createResponsesApi } from './openai-responses.ts';

export type Reply =
  | { type: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { type: 'bytes'; status: number; body: Uint8Array | string; contentType: string; headers?: Record<string, string> }
  | { type: 'sse'; status: number; events: unknown[]; headers?: Record<string, string>; named?: boolean; noDone?: boolean };
// `named`: each event goes with an `event: <its type>` line; `noDone`: no `data: [DONE]` at the end (the Responses API).

export interface ApiRequest {
  method: string;
  url: URL;
  headers: Headers;
  bytes: Uint8Array;
  /** the body parsed as JSON, when it is */
  json: unknown;
}

export interface ApiOptions {
  /** expected bearer token; null accepts any */
  apiKey: string | null;
  basePath: string;
  models: fx.MockModel[];
  strict: boolean;
  now: () => number;
  ids: fx.IdSource;
}

const err = (e: { status: number; body: unknown }): Reply => ({ type: 'json', status: e.status, body: e.body });
const ok = (body: unknown): Reply => ({ type: 'json', status: 200, body });

const CHAT_PARAMS = new Set([
  'model', 'messages', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs',
  'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'n', 'parallel_tool_calls', 'prediction',
  'presence_penalty', 'prompt_cache_key', 'prompt_cache_retention', 'reasoning_effort', 'response_format',
  'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options', 'temperature',
  'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options',
]);
const COMPLETION_PARAMS = new Set([
  'model', 'prompt', 'best_of', 'echo', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_tokens', 'n',
  'presence_penalty', 'seed', 'stop', 'stream', 'stream_options', 'suffix', 'temperature', 'top_p', 'user',
]);
const EMBEDDING_PARAMS = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user']);
const MODERATION_PARAMS = new Set(['model', 'input']);
const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

export type Json = Record<string, unknown>;
export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function createApi(opts: ApiOptions) {
  const { apiKey, basePath, models, ids } = opts;
  const strict = opts.strict;
  let files = new Map<string, fx.StoredFile>();
  const seconds = () => Math.floor(opts.now() / 1000);
  const responses = createResponsesApi(ids, seconds);
  const findModel = (id: unknown) => (typeof id === 'string' ? models.find((m) => m.id === id) : undefined);

  function unknownParam(body: Json, allowed: Set<string>): Reply | undefined {
    if (!strict) return undefined;
    const extra = Object.keys(body).find((k) => !allowed.has(k));
    return extra === undefined ? undefined : err(fx.errors.unknownParam(extra));
  }

  function checkModel(body: Json, kind: fx.ModelKind, endpoint: string): Reply | fx.MockModel {
    if (body.model === undefined || body.model === null || body.model === '') return err(fx.errors.noModel());
    const m = findModel(body.model);
    if (!m) return err(fx.errors.modelNotFound(String(body.model)));
    if (m.kind === kind) return m;
    if (kind === 'chat') {
      return err(fx.errors.wrongEndpoint(`This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?`));
    }
    if (kind === 'completion' && m.kind === 'chat') {
      return err(fx.errors.wrongEndpoint(`This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?`));
    }
    return err(fx.errors.wrongEndpoint(`The model \`${m.id}\` is not supported by the ${endpoint} endpoint.`));
  }

  function numberRange(body: Json, name: string, min: number, max: number, integer: boolean): Reply | undefined {
    const v = body[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || (integer && !Number.isInteger(v))) {
      return err(fx.errors.invalidValue(`${JSON.stringify(v)} is not of type '${integer ? 'integer' : 'number'}' - '${name}'`, name, 'invalid_type'));
    }
    const kind = integer ? 'integer' : 'decimal';
    if (v < min) return err(fx.errors.invalidValue(`${v} is less than the minimum of ${min} - '${name}'`, name, `${kind}_below_min_value`));
    if (v > max) return err(fx.errors.invalidValue(`${v} is greater than the maximum of ${max} - '${name}'`, name, `${kind}_above_max_value`));
    return undefined;
  }

  function streamOptions(body: Json): Reply | boolean {
    if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
      return err(fx.errors.invalidValue(`The 'stream_options' parameter is only allowed when 'stream' is enabled.`, 'stream_options'));
    }
    return isObj(body.stream_options) && body.stream_options.include_usage === true;
  }

  // ---- POST /chat/completions
  function chat(body: Json): Reply {
    const bad = unknownParam(body, CHAT_PARAMS);
    if (bad) return bad;
    const m = checkModel(body, 'chat', 'chat/completions');
    if ('type' in m) return m;
    const messages = body.messages;
    if (messages === undefined) return err(fx.errors.missingParam('messages'));
    if (!Array.isArray(messages)) {
      return err(fx.errors.invalidValue(`${JSON.stringify(messages)} is not of type 'array' - 'messages'`, 'messages', 'invalid_type'));
    }
    if (messages.length === 0) return err(fx.errors.invalidValue(`[] is too short - 'messages'`, 'messages', 'empty_array'));
    for (let i = 0; i < messages.length; i++) {
      const msg = messages[i];
      if (!isObj(msg)) return err(fx.errors.invalidValue(`${JSON.stringify(msg)} is not of type 'object' - 'messages.${i}'`, `messages.[${i}]`, 'invalid_type'));
      if (!ROLES.includes(String(msg.role))) {
        return err(
          fx.errors.invalidValue(`${JSON.stringify(msg.role)} is not one of ${JSON.stringify(ROLES).replaceAll('"', "'").replaceAll(',', ', ')} - 'messages.${i}.role'`, `messages.[${i}].role`, 'invalid_value'),
        );
      }
    }
    const range =
      numberRange(body, 'temperature', 0, 2, false) ??
      numberRange(body, 'top_p', 0, 1, false) ??
      numberRange(body, 'n', 1, 128, true) ??
      numberRange(body, 'max_tokens', 1, Number.MAX_SAFE_INTEGER, true) ??
      numberRange(body, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER, true);
    if (range) return range;
    const includeUsage = streamOptions(body);
    if (typeof includeUsage !== 'boolean') return includeUsage;

    const msgs = messages as fx.ChatMessage[];
    const text = fx.lastUserText(msgs);
    const n = typeof body.n === 'number' ? body.n : 1;
    const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;

    const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
    const choice = body.tool_choice;
    // A forced tool call (tool_choice "required" or a named function) is answered with a call to that tool.
    let toolName: string | undefined;
    if (tools.length > 0 && isObj(choice) && isObj(choice.function) && typeof choice.function.name === 'string') toolName = choice.function.name;
    else if (tools.length > 0 && choice === 'required') {
      const f = tools.find((t) => isObj(t.function))?.function;
      if (isObj(f) && typeof f.name === 'string') toolName = f.name;
    }

    const specs: fx.ChatChoiceSpec[] = [];
    let completionWords = 0;
    for (let i = 0; i < n; i++) {
      if (toolName) {
        const args = JSON.stringify({ text });
        specs.push({ content: null, finish: 'tool_calls', toolCalls: [{ id: ids.next('call_', 24), type: 'function', function: { name: toolName, arguments: args } }] });
        completionWords += fx.countWords(args);
      } else {
        const cut = fx.limitAnswer(fx.echoAnswer(text), body.stop, maxTokens);
        specs.push({ content: cut.text, finish: cut.finish });
        completionWords += fx.countWords(cut.text);
      }
    }
    const meta = { id: ids.next('chatcmpl-', 29), created: seconds(), model: m.id };
    const usage = fx.chatUsage(fx.promptWords(msgs), completionWords);
    if (body.stream === true) return { type: 'sse', status: 200, events: fx.chatChunks(meta, specs, { usage, includeUsage }) };
    return ok(fx.chatCompletion(meta, specs, usage));
  }

  // ---- POST /completions
  function completions(body: Json): Reply {
    const bad = unknownParam(body, COMPLETION_PARAMS);
    if (bad) return bad;
    const m = checkModel(body, 'completion', 'completions');
    if ('type' in m) return m;
    if (body.prompt === undefined) return err(fx.errors.missingParam('prompt'));
    const prompts = Array.isArray(body.prompt) && body.prompt.every((p) => typeof p === 'string') ? (body.prompt as string[]) : [promptText(body.prompt)];
    const range =
      numberRange(body, 'temperature', 0, 2, false) ??
      numberRange(body, 'n', 1, 128, true) ??
      numberRange(body, 'max_tokens', 0, Number.MAX_SAFE_INTEGER, true);
    if (range) return range;
    const includeUsage = streamOptions(body);
    if (typeof includeUsage !== 'boolean') return includeUsage;

    const n = typeof body.n === 'number' ? body.n : 1;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16; // the API's default
    const choices: fx.Cut[] = [];
    let completionWords = 0;
    for (const p of prompts) {
      for (let i = 0; i < n; i++) {
        const cut = fx.limitAnswer(fx.echoAnswer(p), body.stop, maxTokens);
        completionWords += fx.countWords(cut.text);
        choices.push(body.echo === true ? { text: p + cut.text, finish: cut.finish } : cut);
      }
    }
    const meta = { id: ids.next('cmpl-', 29), created: seconds(), model: m.id };
    const usage = fx.completionUsage(prompts.reduce((s, p) => s + fx.countWords(p), 0), completionWords);
    if (body.stream === true) return { type: 'sse', status: 200, events: fx.textCompletionChunks(meta, choices, { usage, includeUsage }) };
    return ok(fx.textCompletion(meta, choices, usage));
  }

  // ---- POST /embeddings
  function embeddings(body: Json): Reply {
    const bad = unknownParam(body, EMBEDDING_PARAMS);
    if (bad) return bad;
    if (body.input === undefined) return err(fx.errors.missingParam('input'));
    const m = checkModel(body, 'embedding', 'embeddings');
    if ('type' in m) return m;
    const input = body.input;
    let inputs: { text: string; tokens: number }[];
    if (typeof input === 'string') inputs = [{ text: input, tokens: fx.countWords(input) }];
    else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string')) inputs = (input as string[]).map((t) => ({ text: t, tokens: fx.countWords(t) }));
    else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) inputs = [{ text: input.join(' '), tokens: input.length }];
    else if (Array.isArray(input) && input.length > 0 && input.every((x) => Array.isArray(x) && x.length > 0 && x.every((y) => typeof y === 'number'))) {
      inputs = (input as number[][]).map((t) => ({ text: t.join(' '), tokens: t.length }));
    } else inputs = [];
    if (inputs.length === 0 || inputs.some((i) => i.text === '')) {
      return err(fx.errors.invalidValue(`'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.`, 'input'));
    }
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') {
      return err(fx.errors.invalidValue(`${JSON.stringify(format).replaceAll('"', "'")} is not one of ['float', 'base64'] - 'encoding_format'`, 'encoding_format'));
    }
    let dims = m.dimensions ?? 1536;
    if (body.dimensions !== undefined && body.dimensions !== null) {
      if (!m.shortenable) return err(fx.errors.invalidValue('This model does not support specifying dimensions.', 'dimensions'));
      const r = numberRange(body, 'dimensions', 1, dims, true);
      if (r) return r;
      dims = body.dimensions as number;
    }
    const vectors = inputs.map((i) => fx.embeddingVector(m.id, i.text, dims));
    return ok(fx.embeddingList(m.id, vectors, format, inputs.reduce((s, i) => s + i.tokens, 0)));
  }

  // ---- POST /moderations
  function moderations(body: Json): Reply {
    const bad = unknownParam(body, MODERATION_PARAMS);
    if (bad) return bad;
    if (body.input === undefined) return err(fx.errors.missingParam('input'));
    const model = body.model ?? 'omni-moderation-latest';
    const m = checkModel({ model }, 'moderation', 'moderations');
    if ('type' in m) return m;
    const omni = m.id.startsWith('omni-');
    const input = body.input;
    let items: fx.ModerationInput[];
    if (typeof input === 'string') items = [{ text: input, hasImage: false }];
    else if (Array.isArray(input) && input.every((x) => typeof x === 'string')) items = (input as string[]).map((t) => ({ text: t, hasImage: false }));
    else if (Array.isArray(input) && input.every((x) => isObj(x) && (x.type === 'text' || x.type === 'image_url'))) {
      if (!omni) return err(fx.errors.invalidValue(`Model ${m.id} does not support image inputs.`, 'input'));
      const parts = input as Json[];
      items = [{ text: parts.filter((p) => p.type === 'text').map((p) => String(p.text ?? '')).join(' '), hasImage: parts.some((p) => p.type === 'image_url') }];
    } else return err(fx.errors.invalidValue(`'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.`, 'input'));
    return ok(fx.moderation(ids.next('modr-', 32), m.id, items.map((i) => fx.moderationResult(i, omni))));
  }

  // ---- files
  async function uploadFile(headers: Headers, bytes: Uint8Array): Promise<Reply> {
    const ct = headers.get('content-type') ?? '';
    if (!ct.toLowerCase().startsWith('multipart/form-data')) {
      return err(fx.errors.invalidValue(`Invalid Content-Type header (${ct || 'none'}), expected multipart/form-data.`, 'file'));
    }
    const form = await new Response(bytes, { headers: { 'content-type': ct } }).formData().catch(() => null);
    if (!form) return err(fx.errors.invalidValue('Could not parse multipart form', 'file'));
    const file = form.get('file');
    const purpose = form.get('purpose');
    if (!(file instanceof Blob)) return err(fx.errors.missingParam('file'));
    if (typeof purpose !== 'string' || purpose === '') return err(fx.errors.missingParam('purpose'));
    if (!(fx.FILE_PURPOSES as readonly string[]).includes(purpose)) {
      return err(fx.errors.invalidValue(`'${purpose}' is not one of ${JSON.stringify(fx.FILE_PURPOSES).replaceAll('"', "'").replaceAll(',', ', ')} - 'purpose'`, 'purpose'));
    }
    const content = new Uint8Array(await file.arrayBuffer());
    const created = seconds();
    const expiresAfter = Number(form.get('expires_after[seconds]'));
    const stored: fx.StoredFile = {
      id: ids.next('file-', 22),
      bytes: content.byteLength,
      created_at: created,
      expires_at: Number.isFinite(expiresAfter) && expiresAfter > 0 ? created + expiresAfter : null,
      filename: file instanceof File && file.name ? file.name : 'upload',
      purpose,
      content,
      contentType: file.type || 'application/octet-stream',
    };
    files.set(stored.id, stored);
    return ok(fx.fileObject(stored));
  }

  function listFiles(search: URLSearchParams): Reply {
    let all = [...files.values()];
    const purpose = search.get('purpose');
    if (purpose) all = all.filter((f) => f.purpose === purpose);
    if ((search.get('order') ?? 'desc') === 'desc') all.reverse();
    const after = search.get('after');
    if (after) {
      const i = all.findIndex((f) => f.id === after);
      all = i >= 0 ? all.slice(i + 1) : all;
    }
    const limit = Math.max(1, Math.min(10000, Number(search.get('limit') ?? 10000) || 10000));
    return ok(fx.fileList(all.slice(0, limit), all.length > limit));
  }

  // ---- routing
  async function route(req: ApiRequest): Promise<Reply> {
    const { url, bytes } = req;
    const method = req.method.toUpperCase();
    if (apiKey !== null) {
      const auth = req.headers.get('authorization') ?? '';
      const m = /^Bearer\s+(.*)$/i.exec(auth.trim());
      const key = m?.[1]?.trim() ?? '';
      if (!key) return err(fx.errors.missingKey());
      if (key !== apiKey) return err(fx.errors.invalidKey(key));
    }
    const invalid = () => err(fx.errors.invalidUrl(method, url.pathname));
    if (basePath && url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return invalid();
    const rest = url.pathname.slice(basePath.length).replace(/\/+$/, '') || '/';
    let seg: string[];
    try {
      seg = rest.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      return invalid();
    }

    const withJson = (fn: (b: Json) => Reply): Reply => (isObj(req.json) ? fn(req.json) : err(fx.errors.invalidJson()));

    if (method === 'GET' && rest === '/models') return ok(fx.modelList(models));
    if (method === 'GET' && seg[0] === 'models' && seg.length >= 2) {
      const id = seg.slice(1).join('/');
      const m = findModel(id);
      if (!m) return err({ status: 404, body: fx.errorBody({ message: `The model '${id}' does not exist`, param: 'model', code: 'model_not_found' }) });
      return ok(fx.modelObject(m));
    }
    if (method === 'POST' && rest === '/chat/completions') return withJson(chat);
    if (method === 'POST' && rest === '/completions') return withJson(completions);
    if (method === 'POST' && rest === '/embeddings') return withJson(embeddings);
    if (method === 'POST' && rest === '/moderations') return withJson(moderations);
    if (method === 'POST' && rest === '/responses') return withJson(responses.create);
    if (seg[0] === 'responses' && seg.length === 2 && method === 'GET') return responses.retrieve(seg[1]!);
    if (seg[0] === 'responses' && seg.length === 2 && method === 'DELETE') return responses.remove(seg[1]!);
    if (seg[0] === 'files') {
      if (method === 'POST' && seg.length === 1) return uploadFile(req.headers, bytes);
      if (method === 'GET' && seg.length === 1) return listFiles(url.searchParams);
      const f = seg[1] ? files.get(seg[1]) : undefined;
      if (seg.length === 2 && (method === 'GET' || method === 'DELETE')) {
        if (!f) return err(fx.errors.noSuchFile(seg[1]!));
        if (method === 'DELETE') {
          files.delete(f.id);
          return ok({ id: f.id, object: 'file', deleted: true });
        }
        return ok(fx.fileObject(f));
      }
      if (seg.length === 3 && seg[2] === 'content' && method === 'GET') {
        if (!f) return err(fx.errors.noSuchFile(seg[1]!));
        return { type: 'bytes', status: 200, body: f.content, contentType: 'application/octet-stream' };
      }
    }
    return invalid();
  }

  return {
    route,
    resetFiles() {
      files = new Map();
    },
  };
}

/** A prompt given as tokens (an array of numbers, or of such arrays) becomes text that can be echoed. */
function promptText(p: unknown): string {
  if (typeof p === 'string') return p;
  if (Array.isArray(p)) return p.flat().map(String).join(' ');
  return '';
}
