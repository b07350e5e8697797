// Builders for OpenAI's wire format: the JSON bodies of the public API, field for field and in the order the API
// reference documents them. Pure functions, no I/O: `openai-server.ts` serves them, and tests may use them to script
// answers (`frames.chat(...)`) or to compute the answer they expect (`echoAnswer`, `countWords`, `embeddingVector`).
//
// Deterministic content: chat and text completions answer "You said: <last user text>"; usage counts words;
// embeddings are a unit vector seeded by (model, input); moderations flag a few keywords.

export const SYSTEM_FINGERPRINT = 'fp_0123456789';

// --------------------------------------------------------------------------------------------------------------
// models

export type ModelKind = 'chat' | 'completion' | 'embedding' | 'moderation';

export interface MockModel {
  id: string;
  created: number;
  owned_by: string;
  kind: ModelKind;
  /** embeddings: default length of a vector, and whether `dimensions` may shorten it */
  dimensions?: number;
  shortenable?: boolean;
}

export const DEFAULT_MODELS: MockModel[] = [
  { id: 'gpt-4o', created: 1715367049, owned_by: 'system', kind: 'chat' },
  { id: 'gpt-4o-mini', created: 1721172741, owned_by: 'system', kind: 'chat' },
  { id: 'gpt-4.1', created: 1744316542, owned_by: 'system', kind: 'chat' },
  { id: 'gpt-4.1-mini', created: 1744318173, owned_by: 'system', kind: 'chat' },
  { id: 'gpt-3.5-turbo', created: 1677610602, owned_by: 'openai', kind: 'chat' },
  { id: 'gpt-3.5-turbo-instruct', created: 1692901427, owned_by: 'system', kind: 'completion' },
  { id: 'davinci-002', created: 1692634301, owned_by: 'system', kind: 'completion' },
  { id: 'text-embedding-3-small', created: 1705948997, owned_by: 'system', kind: 'embedding', dimensions: 1536, shortenable: true },
  { id: 'text-embedding-3-large', created: 1705953180, owned_by: 'system', kind: 'embedding', dimensions: 3072, shortenable: true },
  { id: 'text-embedding-ada-002', created: 1671217299, owned_by: 'openai-internal', kind: 'embedding', dimensions: 1536 },
  { id: 'omni-moderation-latest', created: 1731689265, owned_by: 'system', kind: 'moderation' },
  { id: 'text-moderation-latest', created: 1695069040, owned_by: 'openai-internal', kind: 'moderation' },
];

export function modelObject(m: MockModel) {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.owned_by };
}

export function modelList(models: MockModel[]) {
  return { object: 'list', data: models.map(modelObject) };
}

// --------------------------------------------------------------------------------------------------------------
// errors: {"error": {"message", "type", "param", "code"}}

export interface ErrorFields {
  message: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

export function errorBody(e: ErrorFields) {
  return { error: { message: e.message, type: e.type ?? 'invalid_request_error', param: e.param ?? null, code: e.code ?? null } };
}

/** The errors the real API gives for the situations the mock checks, with their status codes. */
export const errors = {
  missingKey: () => ({
    status: 401,
    body: errorBody({
      message:
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
    }),
  }),
  invalidKey: (key: string) => ({
    status: 401,
    body: errorBody({
      message: `Incorrect API key provided: ${maskKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      code: 'invalid_api_key',
    }),
  }),
  invalidJson: () => ({
    status: 400,
    body: errorBody({
      message:
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    }),
  }),
  invalidUrl: (method: string, path: string) => ({
    status: 404,
    body: errorBody({ message: `Invalid URL (${method} ${path})` }),
  }),
  noModel: () => ({ status: 400, body: errorBody({ message: 'you must provide a model parameter' }) }),
  modelNotFound: (model: string) => ({
    status: 404,
    body: errorBody({ message: `The model \`${model}\` does not exist or you do not have access to it.`, code: 'model_not_found' }),
  }),
  wrongEndpoint: (message: string) => ({ status: 404, body: errorBody({ message, param: 'model' }) }),
  missingParam: (param: string) => ({
    status: 400,
    body: errorBody({ message: `Missing required parameter: '${param}'.`, param, code: 'missing_required_parameter' }),
  }),
  unknownParam: (param: string) => ({
    status: 400,
    body: errorBody({ message: `Unrecognized request argument supplied: ${param}` }),
  }),
  invalidValue: (message: string, param: string, code: string | null = null) => ({
    status: 400,
    body: errorBody({ message, param, code }),
  }),
  noSuchFile: (id: string) => ({ status: 404, body: errorBody({ message: `No such File object: ${id}`, param: 'id' }) }),
};

/** How the API shows a wrong key in its message: the start and the last four characters. */
export function maskKey(key: string): string {
  if (key.length <= 8) return key;
  return `${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}`;
}

// --------------------------------------------------------------------------------------------------------------
// text helpers

export function countWords(text: string): number {
  const t = text.trim();
  return t ? t.split(/\s+/).length : 0;
}

/** Text of a message's `content`: a string, or the `text` of its text parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .filter(Boolean)
      .join(' ');
  }
  return '';
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  [k: string]: unknown;
}

export function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return contentText(messages[i]!.content);
  return '';
}

export function promptWords(messages: ChatMessage[]): number {
  return messages.reduce((n, m) => n + countWords(contentText(m?.content)), 0);
}

export function echoAnswer(text: string): string {
  return `You said: ${text}`;
}

/** The pieces a stream sends: each word with the whitespace before it ("You", " said:", " hello"). */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

export interface Cut {
  text: string;
  finish: 'stop' | 'length';
}

/** Applies `stop` sequences and a token limit the way the API reports them. */
export function limitAnswer(text: string, stop: unknown, maxTokens: number | undefined): Cut {
  let out = text;
  let finish: Cut['finish'] = 'stop';
  const stops = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s !== '') : [];
  for (const s of stops) {
    const i = out.indexOf(s);
    if (i >= 0) out = out.slice(0, i);
  }
  if (maxTokens !== undefined) {
    const toks = tokenize(out);
    if (toks.length > maxTokens) {
      out = toks.slice(0, maxTokens).join('');
      finish = 'length';
    }
  }
  return { text: out, finish };
}

// --------------------------------------------------------------------------------------------------------------
// ids and time

export class IdSource {
  private n = 0;
  next(prefix: string, length: number): string {
    this.n += 1;
    const digits = String(this.n);
    return `${prefix}mock${digits.padStart(Math.max(digits.length, length - 4), '0')}`;
  }
  requestId(): string {
    return this.next('req_', 32);
  }
}

// --------------------------------------------------------------------------------------------------------------
// chat completions

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

export function chatUsage(prompt: number, completion: number): ChatUsage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatChoiceSpec {
  content: string | null;
  finish: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  toolCalls?: ToolCall[];
}

export interface ChatMeta {
  id: string;
  created: number;
  model: string;
}

export function chatCompletion(meta: ChatMeta, choices: ChatChoiceSpec[], usage: ChatUsage) {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: choices.map((c, index) => ({
      index,
      message: {
        role: 'assistant',
        content: c.content,
        ...(c.toolCalls ? { tool_calls: c.toolCalls } : {}),
        refusal: null,
        annotations: [],
      },
      logprobs: null,
      finish_reason: c.finish,
    })),
    usage,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

export interface ChunkChoice {
  index: number;
  delta: Record<string, unknown>;
  finish_reason: string | null;
}

/**
 * One `chat.completion.chunk`. `usage` is left out unless given: `null` on every chunk of a stream that asked for
 * `stream_options.include_usage`, the usage object on its last chunk (whose `choices` is empty).
 */
export function chatChunk(meta: ChatMeta, choices: ChunkChoice[], usage?: ChatUsage | null) {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: choices.map((c) => ({ index: c.index, delta: c.delta, logprobs: null, finish_reason: c.finish_reason })),
    ...(usage !== undefined ? { usage } : {}),
  };
}

/**
 * The chunks of a streamed chat answer, in the order the API sends them (without the `[DONE]` sentinel): each chunk
 * carries one choice; first the role (with the first tool call's name, when the answer is a tool call), then the
 * content a word at a time (choices taking turns) or the tool-call arguments in two pieces, then the finish reason,
 * and, when the request set `stream_options.include_usage`, a last chunk with empty `choices` and the usage.
 */
export function chatChunks(meta: ChatMeta, choices: ChatChoiceSpec[], opts: { usage?: ChatUsage; includeUsage?: boolean } = {}) {
  const u = opts.includeUsage ? null : undefined;
  const out: ReturnType<typeof chatChunk>[] = [];
  const one = (index: number, delta: Record<string, unknown>, finish: string | null = null) =>
    out.push(chatChunk(meta, [{ index, delta, finish_reason: finish }], u));
  const toolHeader = (tc: ToolCall, i: number) => ({ index: i, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } });

  choices.forEach((c, index) => {
    const first = c.toolCalls?.[0];
    if (first) one(index, { role: 'assistant', content: null, tool_calls: [toolHeader(first, 0)], refusal: null });
    else one(index, { role: 'assistant', content: '', refusal: null });
  });
  const tokens = choices.map((c) => (c.toolCalls ? [] : tokenize(c.content ?? '')));
  const longest = Math.max(0, ...tokens.map((t) => t.length));
  for (let t = 0; t < longest; t++) {
    tokens.forEach((toks, index) => {
      if (t < toks.length) one(index, { content: toks[t] });
    });
  }
  choices.forEach((c, index) => {
    c.toolCalls?.forEach((tc, i) => {
      if (i > 0) one(index, { tool_calls: [toolHeader(tc, i)] });
      const args = tc.function.arguments;
      const half = Math.ceil(args.length / 2);
      for (const piece of [args.slice(0, half), args.slice(half)]) if (piece) one(index, { tool_calls: [{ index: i, function: { arguments: piece } }] });
    });
  });
  choices.forEach((c, index) => one(index, {}, c.finish));
  if (opts.includeUsage && opts.usage) out.push(chatChunk(meta, [], opts.usage));
  return out;
}

// --------------------------------------------------------------------------------------------------------------
// text completions (legacy)

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function completionUsage(prompt: number, completion: number): CompletionUsage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function textCompletion(meta: ChatMeta, choices: Cut[], usage: CompletionUsage) {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: choices.map((c, index) => ({ text: c.text, index, logprobs: null, finish_reason: c.finish })),
    usage,
  };
}

export function textCompletionChunk(meta: ChatMeta, choices: { text: string; index: number; finish_reason: string | null }[], usage?: CompletionUsage | null) {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: choices.map((c) => ({ text: c.text, index: c.index, logprobs: null, finish_reason: c.finish_reason })),
    ...(usage !== undefined ? { usage } : {}),
  };
}

export function textCompletionChunks(meta: ChatMeta, choices: Cut[], opts: { usage?: CompletionUsage; includeUsage?: boolean } = {}) {
  const u = opts.includeUsage ? null : undefined;
  const out: ReturnType<typeof textCompletionChunk>[] = [];
  choices.forEach((c, index) => {
    for (const tok of tokenize(c.text)) out.push(textCompletionChunk(meta, [{ text: tok, index, finish_reason: null }], u));
    out.push(textCompletionChunk(meta, [{ text: '', index, finish_reason: c.finish }], u));
  });
  if (opts.includeUsage && opts.usage) out.push(textCompletionChunk(meta, [], opts.usage));
  return out;
}

// --------------------------------------------------------------------------------------------------------------
// embeddings

function hash32(s: string): number {
  // FNV-1a
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deterministic unit vector of float32 values for (model, input). */
export function embeddingVector(model: string, input: string, dimensions: number): Float32Array {
  const rnd = mulberry32(hash32(`${model}\u0000${input}`));
  const v = new Float64Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const x = rnd() * 2 - 1;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = v[i]! / norm;
  return out;
}

/** The shortest decimal that reads back as the same float32: how the API prints embedding values. */
export function float32Decimal(x: number): number {
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) {
    const d = Number(f.toPrecision(p));
    if (Math.fround(d) === f) return d;
  }
  return f;
}

/** Little-endian float32 bytes in base64, as `encoding_format: "base64"` returns them. */
export function float32Base64(v: Float32Array): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  return Buffer.from(bytes).toString('base64');
}

export function embeddingList(model: string, vectors: Float32Array[], format: 'float' | 'base64', promptTokens: number) {
  return {
    object: 'list',
    data: vectors.map((v, index) => ({
      object: 'embedding',
      embedding: format === 'base64' ? float32Base64(v) : Array.from(v, float32Decimal),
      index,
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

// --------------------------------------------------------------------------------------------------------------
// moderations

export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

/** Categories that omni models also judge on images. */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

/** Keywords that flag a category in the mock (case-insensitive, whole words). */
export const MODERATION_KEYWORDS: Record<string, RegExp> = {
  harassment: /\b(idiot|stupid|loser)\b/i,
  'harassment/threatening': /\b(i will hurt you|you will pay)\b/i,
  hate: /\b(hateful|bigot)\b/i,
  illicit: /\b(steal|shoplift|cocaine|meth)\b/i,
  'illicit/violent': /\b(build a bomb|make a weapon)\b/i,
  'self-harm': /\b(self-harm|suicide|hurt myself)\b/i,
  sexual: /\b(porn|explicit sex)\b/i,
  violence: /\b(kill|murder|stab|shoot)\b/i,
  'violence/graphic': /\b(gore|dismember)\b/i,
};

export interface ModerationInput {
  text: string;
  hasImage: boolean;
}

export function moderationResult(input: ModerationInput, omni: boolean) {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const c of MODERATION_CATEGORIES) {
    const hit = MODERATION_KEYWORDS[c]?.test(input.text) ?? false;
    categories[c] = hit;
    scores[c] = hit ? 0.9 : 0.0001;
    const types: string[] = [];
    if (input.text) types.push('text');
    if (input.hasImage && IMAGE_CATEGORIES.has(c)) types.push('image');
    applied[c] = types;
  }
  return {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores: scores,
    ...(omni ? { category_applied_input_types: applied } : {}),
  };
}

export function moderation(id: string, model: string, results: ReturnType<typeof moderationResult>[]) {
  return { id, model, results };
}

// --------------------------------------------------------------------------------------------------------------
// files

export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;

export interface StoredFile {
  id: string;
  bytes: number;
  created_at: number;
  expires_at: number | null;
  filename: string;
  purpose: string;
  content: Uint8Array;
  contentType: string;
}

export function fileObject(f: StoredFile) {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: f.created_at,
    expires_at: f.expires_at,
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
    status_details: null,
  };
}

export function fileList(files: StoredFile[], hasMore: boolean) {
  const data = files.map(fileObject);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

// --------------------------------------------------------------------------------------------------------------
// SSE framing

/** `data: <json>\n\n`, as the API frames each event. */
export function sseData(value: unknown): string {
  return `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
