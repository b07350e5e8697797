/**
 * Credentials inside stored JSON (a saved config's provider keys, a guardrail check's `apiKey` or webhook headers):
 * stored sealed apart from the document, never answered back, never put in the audit log. The document keeps
 * MASK where a secret was; a client that sends MASK back (GET, edit, PUT) keeps the stored secret at that path.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import type { SealedAt, SecretBox } from './crypto.ts';

export const MASK = '********';

/** Keys whose value is a credential wherever they appear (config targets, check parameters). */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'api_key',
  'apiKey',
  'Authorization',
  'authorization',
  'svcA_secret_access_key',
  'svcA_session_token',
  'svcB_entra_client_secret',
  'svcC_service_account_json',
  'token',
  'secret',
  'password',
  'client_secret',
  'access_token',
]);
/** Keys whose every member is a credential (HTTP headers of webhook-style checks). */
const SECRET_MAPS: ReadonlySet<string> = new Set(['headers']);

export type JsonPath = readonly (string | number)[];
/** The sealed part of a document: each secret with where it was. */
export type SecretPairs = [JsonPath, Json][];

/** `targets[0].api_key`, `input_guardrails[1]["default.webhook"].headers.x-key` style. */
export function formatPath(path: JsonPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Visits every secret position: `at` is called with the path and the value found there. */
function walk(value: Json, path: (string | number)[], at: (path: JsonPath, value: Json) => Json | undefined): Json {
  if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i], at));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, key];
    if (SECRET_KEYS.has(key) && child !== null) {
      out[key] = at(here, child) ?? child;
    } else if (SECRET_MAPS.has(key) && typeof child === 'string') {
      out[key] = at(here, child) ?? child; // headers given as a JSON string
    } else if (SECRET_MAPS.has(key) && isObject(child)) {
      const map: JsonObject = {};
      for (const [name, v] of Object.entries(child)) map[name] = v === null ? v : (at([...here, name], v) ?? v);
      out[key] = map;
    } else {
      out[key] = walk(child, here, at);
    }
  }
  return out;
}

/** The document with MASK in place of every secret, and the secrets apart. */
export function splitSecrets<T extends Json>(document: T): { masked: T; secrets: SecretPairs } {
  const secrets: SecretPairs = [];
  const masked = walk(document, [], (path, value) => {
    secrets.push([path, value]);
    return MASK;
  }) as T;
  return { masked, secrets };
}

const samePath = (a: JsonPath, b: JsonPath) => a.length === b.length && a.every((part, i) => part === b[i]);

/**
 * A document from a client where MASK stands for the secret stored at the same path before: those are put back.
 * `problems` names every MASK with nothing stored at its path (`prefix`: the document's own name in a path, or '').
 */
export function restoreMasked<T extends Json>(document: T, previous: SecretPairs, prefix: string): { value: T; problems: string[] } {
  const problems: string[] = [];
  const value = walk(document, [], (path, found) => {
    if (found !== MASK) return undefined;
    const stored = previous.find(([p]) => samePath(p, path));
    if (stored) return stored[1];
    problems.push(`${formatPath(prefix ? [prefix, ...path] : path)}: ${JSON.stringify(MASK)} stands for a stored secret, and none is stored at this path`);
    return undefined;
  }) as T;
  return { value, problems };
}

/** Puts sealed secrets back into a masked document (loading for the hot path). */
export function joinSecrets<T extends Json>(masked: T, secrets: SecretPairs): T {
  if (secrets.length === 0) return masked;
  return walk(masked, [], (path) => secrets.find(([p]) => samePath(p, path))?.[1]) as T;
}

/** A document as stored: masked, with its secrets sealed apart for the row and column `at` (null when it has none). */
export function sealSecrets<T extends Json>(document: T, box: () => SecretBox, at: SealedAt): { masked: T; sealed: string | null } {
  const { masked, secrets } = splitSecrets(document);
  return { masked, sealed: secrets.length > 0 ? box().sealJson(secrets, at) : null };
}

/** The secrets of a stored document (`sealSecrets`' `sealed`, from `at`); the box is asked for only when there are some. */
export function openSecrets(sealed: string | null, box: () => SecretBox, at: SealedAt): SecretPairs {
  return sealed ? box().openJson<SecretPairs>(sealed, at) : [];
}
