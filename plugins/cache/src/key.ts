/**
 * Cache keys (README.md "The key"). A key is the SHA-256 (hex) of:
 *
 * - a version tag, the caller's workspace, the endpoint;
 * - the resolved target: the provider adapter's id and every target field that shapes the provider call (provider,
 *   custom_host, credentials and account fields such as `api_key`, `svc*`, `resource_name`, `deployment_id`, …).
 *   Credentials only ever enter the hash: no key, log or stored value holds them in clear;
 * - the scope: the `x-gateway-cache-namespace` value when the request sends one, else the request metadata
 *   (`x-gateway-metadata`) and the values of the headers the target forwards to the provider;
 * - the body the target sends (`attempt.body`: after override/default/drop rules) as canonical JSON (keys sorted at
 *   every depth), without `stream` and `stream_options`, so that a streamed and a whole request share one entry.
 *
 * A semantic partition is the same hash with the conversation's text left out (its shape kept): requests that differ
 * only in what their messages say land in one partition, where similarity decides.
 */
import type { Attempt, GatewayRequest, Json, JsonObject, TargetConfig } from '@gateway/sdk';

/** JSON with object keys sorted at every depth (undefined members left out), so equal values give equal text. */
export function canonicalJson(value: unknown, skipTop?: ReadonlySet<string>): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i] === undefined ? null : value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined || skipTop?.has(k)) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** Body fields that do not change the answer's content: a stored answer serves streamed and whole requests alike. */
export const STREAM_FIELDS: ReadonlySet<string> = new Set(['stream', 'stream_options']);

/**
 * Target fields that do not shape the provider call: routing, resilience, hooks, and the parameter rules (already
 * applied to `attempt.body`). Every other field (provider, custom_host, credentials, account and deployment names)
 * is part of the key.
 */
const NOT_TARGET_IDENTITY: ReadonlySet<string> = new Set([
  'strategy',
  'targets',
  'name',
  'weight',
  'on_status_codes',
  'retry',
  'cache',
  'cb_config',
  'request_timeout',
  'override_params',
  'default_params',
  'drop_params',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
  'prompt_id',
]);

const identities = new WeakMap<object, string>();

/** The target's identity as canonical JSON (credentials included: it only ever feeds the hash); once per object. */
export function targetIdentity(target: TargetConfig): string {
  let id = identities.get(target);
  if (id === undefined) {
    id = canonicalJson(target, NOT_TARGET_IDENTITY);
    identities.set(target, id);
  }
  return id;
}

export const NAMESPACE_HEADER = 'x-gateway-cache-namespace';
export const FORCE_REFRESH_HEADER = 'x-gateway-cache-force-refresh';

/** What partitions the cache besides workspace and target: the namespace, or metadata and forwarded headers. */
export function scopeOf(req: GatewayRequest, target: TargetConfig): string {
  const namespace = req.headers.get(NAMESPACE_HEADER);
  if (namespace !== null && namespace !== '') return `ns:${JSON.stringify(namespace)}`;
  let scope = `md:${canonicalJson(req.metadata)}`;
  const forwarded = target.forward_headers;
  if (forwarded?.length) {
    const values: (string | null)[] = [];
    for (const name of forwarded) values.push(req.headers.get(name));
    scope += `:fh:${JSON.stringify(forwarded.map((n) => n.toLowerCase()))}${JSON.stringify(values)}`;
  }
  return scope;
}

function sha256(...parts: string[]): string {
  const hasher = new Bun.CryptoHasher('sha256');
  for (const part of parts) hasher.update(part);
  return hasher.digest('hex');
}

/** The head of every key and partition: version, workspace, endpoint, provider, target identity, scope. */
export function keyHead(req: GatewayRequest, attempt: Attempt, scope: string): string {
  return JSON.stringify(['gwc/1', req.caller.workspaceId, req.endpoint, attempt.provider.id, scope]) + targetIdentity(attempt.target);
}

/** The exact-match key of an attempt. */
export function exactKey(head: string, body: JsonObject): string {
  return sha256(head, '\u0000', canonicalJson(body, STREAM_FIELDS));
}

// ---- semantic partitions ---------------------------------------------------------------------------------------

export interface Conversation {
  /** Key of the partition: everything but the texts. */
  partition: string;
  /** The texts compared by similarity, one per message (or prompt), in order. */
  texts: string[];
}

/**
 * Conversations whose texts add up to more characters than this are matched exactly only: embedding them would be
 * slow (lexical) or beyond an embeddings model's input limit (8191 tokens for OpenAI's), and cutting them short
 * could make two conversations that differ only at the end look identical.
 */
export const SEMANTIC_MAX_CHARS = 32_768;

const TEXT_FIELDS: ReadonlySet<string> = new Set(['stream', 'stream_options', 'messages', 'prompt']);

/** A message's text, and the message with its text taken out (its shape, roles and non-text parts stay). */
function splitMessage(message: Json): { text: string; shape: Json } {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return { text: '', shape: message };
  const content = message.content;
  if (typeof content === 'string') return { text: content, shape: { ...message, content: '\u0000text' } };
  if (Array.isArray(content)) {
    const texts: string[] = [];
    const parts = content.map((part) => {
      if (part !== null && typeof part === 'object' && !Array.isArray(part) && part.type === 'text' && typeof part.text === 'string') {
        texts.push(part.text);
        return { ...part, text: '\u0000text' };
      }
      return part;
    });
    return { text: texts.join('\n'), shape: { ...message, content: parts } };
  }
  return { text: '', shape: message };
}

/**
 * The conversation of a chat or completions body, or undefined when there is nothing textual to compare
 * (embeddings, token-array prompts) or too much (SEMANTIC_MAX_CHARS): such requests are matched exactly only.
 */
export function conversationOf(head: string, endpoint: GatewayRequest['endpoint'], body: JsonObject): Conversation | undefined {
  let texts: string[];
  let shape: Json;
  if (endpoint === 'chatComplete') {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) return undefined;
    texts = [];
    const shapes: Json[] = [];
    for (const m of messages) {
      const split = splitMessage(m);
      texts.push(split.text);
      shapes.push(split.shape);
    }
    shape = shapes;
  } else if (endpoint === 'complete') {
    const prompt = body.prompt;
    if (typeof prompt === 'string') texts = [prompt];
    else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((p) => typeof p === 'string')) texts = prompt as string[];
    else return undefined;
    shape = texts.length;
  } else return undefined;
  if (!texts.some((t) => t.trim() !== '')) return undefined;
  let chars = 0;
  for (const t of texts) chars += t.length;
  if (chars > SEMANTIC_MAX_CHARS) return undefined;
  return { partition: sha256('semantic\u0000', head, '\u0000', canonicalJson(body, TEXT_FIELDS), '\u0000', canonicalJson(shape)), texts };
}

/** SHA-256 (hex) of a text: how identical texts are recognised without comparing vectors. */
export function textHash(text: string): string {
  return sha256(text);
}
