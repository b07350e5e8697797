/**
 * What an audit entry keeps of a resource. Handlers should never put a secret in `req.audit`; this is the second
 * line: any field whose name looks like it holds one is replaced by "[redacted]", at any depth. The value becomes
 * plain JSON (no functions, no undefined, dates as strings) and is cut when it is very large.
 */
import type { Json, JsonObject } from '@gateway/sdk';

export const REDACTED = '[redacted]';

/** A name with one of these words anywhere holds a secret (`client_secret`, `db_password`, `authorization`). */
const ALWAYS = new Set(['secret', 'secrets', 'password', 'passwd', 'passphrase', 'credential', 'credentials', 'authorization', 'cookie']);
/** A name ending in one of these holds a secret (`api_key`, `access_token`, `previous_hash`), but `key_type` does not. */
const LAST = new Set(['key', 'token', 'hash', 'apikey', 'pwd', 'jwt', 'signature']);
/** Ids and counts are never secrets: `api_key_id`, `token_count`. */
const HARMLESS_LAST = new Set(['id', 'ids', 'count', 'hint', 'type', 'types', 'name', 'prefix', 'at']);

/** `clientSecret`, `x-api-key`, `API_KEY` → lower-case words. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

export function isSecretName(name: string): boolean {
  const w = words(name);
  const last = w.at(-1);
  if (last === undefined) return false;
  if (HARMLESS_LAST.has(last)) return false;
  return LAST.has(last) || w.some((word) => ALWAYS.has(word));
}

/** Above this many characters of JSON, an entry keeps a note instead of the value. */
export const MAX_VALUE_CHARS = 64 * 1024;
const MAX_DEPTH = 32;

function clean(value: unknown, depth: number, seen: Set<object>): Json | undefined {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined; // functions, symbols, undefined: not JSON
  }
  const object = value as object;
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
  if (depth >= MAX_DEPTH || seen.has(object)) return '[…]';
  seen.add(object);
  try {
    if (Array.isArray(object)) return object.map((item) => clean(item, depth + 1, seen) ?? null);
    const out: JsonObject = {};
    for (const [name, item] of Object.entries(object)) {
      if (isSecretName(name)) {
        if (item !== null && item !== undefined) out[name] = REDACTED;
        else if (item === null) out[name] = null;
        continue;
      }
      const cleaned = clean(item, depth + 1, seen);
      if (cleaned !== undefined) out[name] = cleaned;
    }
    return out;
  } finally {
    seen.delete(object);
  }
}

/** The value as stored: redacted JSON, or null when there is none. */
export function redact(value: unknown): Json {
  const cleaned = clean(value, 0, new Set()) ?? null;
  const size = cleaned === null ? 0 : JSON.stringify(cleaned).length;
  return size > MAX_VALUE_CHARS ? { truncated: true, chars: size } : cleaned;
}
