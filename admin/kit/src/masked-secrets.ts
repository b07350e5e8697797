/**
 * Credentials inside stored JSON (a saved config's provider keys, a guardrail check's `apiKey` or webhook headers):
 * stored sealed apart from the document, never answered back, never put in the audit log. The document keeps
 * MASK where a secret was; a client that sends MASK back (GET, edit, PUT) keeps the stored secret at that path, as
 * long as the fields that decide where it is sent (secret-destinations.ts) are unchanged.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import type { SealedAt, SecretBox } from './crypto.ts';
import { changedDestinations, DOCUMENT_DESTINATIONS, INHERITED_THROUGH } from './secret-destinations.ts';

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

/** Where the secrets of an object go: its own destination fields over those it inherits. */
type Destination = Readonly<Record<string, Json>>;
const NOWHERE: Destination = Object.freeze({});

function destinationOf(object: JsonObject, inherited: Destination): Destination {
  let out: Record<string, Json> | undefined;
  for (const [key, child] of Object.entries(object))
    if (DOCUMENT_DESTINATIONS.has(key) && !SECRET_KEYS.has(key) && child !== undefined) (out ??= { ...inherited })[key] = child;
  return out ?? inherited;
}

type Visit = (path: JsonPath, value: Json, destination: Destination) => Json | undefined;

/** Visits every secret position: `at` is called with the path, the value found there and where it is sent. */
function walk(value: Json, path: (string | number)[], inherited: Destination, at: Visit): Json {
  if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i], inherited, at));
  if (!isObject(value)) return value;
  const destination = destinationOf(value, inherited);
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, key];
    if (SECRET_KEYS.has(key) && child !== null) {
      out[key] = at(here, child, destination) ?? child;
    } else if (SECRET_MAPS.has(key) && typeof child === 'string') {
      out[key] = at(here, child, destination) ?? child; // headers given as a JSON string
    } else if (SECRET_MAPS.has(key) && isObject(child)) {
      const map: JsonObject = {};
      for (const [name, v] of Object.entries(child)) map[name] = v === null ? v : (at([...here, name], v, destination) ?? v);
      out[key] = map;
    } else {
      out[key] = walk(child, here, INHERITED_THROUGH.has(key) ? destination : NOWHERE, at);
    }
  }
  return out;
}

/** The document with MASK in place of every secret, and the secrets apart. */
export function splitSecrets<T extends Json>(document: T): { masked: T; secrets: SecretPairs } {
  const secrets: SecretPairs = [];
  const masked = walk(document, [], NOWHERE, (path, value) => {
    secrets.push([path, value]);
    return MASK;
  }) as T;
  return { masked, secrets };
}

const samePath = (a: JsonPath, b: JsonPath) => a.length === b.length && a.every((part, i) => part === b[i]);

/** A stored document: masked, and its secrets apart. */
export interface StoredDocument {
  masked: Json;
  secrets: SecretPairs;
}

/**
 * A document from a client where MASK stands for the secret stored at the same path before: those are put back,
 * unless a field that decides where that secret is sent changed (then the secret must be entered again).
 * `problems` names every MASK that cannot be put back (`prefix`: the document's own name in a path, or '').
 */
export function restoreMasked<T extends Json>(document: T, previous: StoredDocument, prefix: string): { value: T; problems: string[] } {
  const problems: string[] = [];
  const wentTo = new Map<string, Destination>();
  walk(previous.masked, [], NOWHERE, (path, _value, destination) => {
    wentTo.set(formatPath(path), destination);
    return undefined;
  });
  const value = walk(document, [], NOWHERE, (path, found, destination) => {
    if (found !== MASK) return undefined;
    const name = formatPath(prefix ? [prefix, ...path] : path);
    const stored = previous.secrets.find(([p]) => samePath(p, path));
    if (!stored) {
      problems.push(`${name}: ${JSON.stringify(MASK)} stands for a stored secret, and none is stored at this path`);
      return undefined;
    }
    const before = wentTo.get(formatPath(path)) ?? NOWHERE;
    const changed = changedDestinations(before, destination, new Set([...Object.keys(before), ...Object.keys(destination)]));
    if (changed.length > 0) {
      problems.push(`${name}: ${changed.join(', ')} changed, so the stored secret is not kept: enter it again (a stored secret is only sent where it was entered for)`);
      return undefined;
    }
    return stored[1];
  }) as T;
  return { value, problems };
}

/** Puts sealed secrets back into a masked document (loading for the hot path). */
export function joinSecrets<T extends Json>(masked: T, secrets: SecretPairs): T {
  if (secrets.length === 0) return masked;
  return walk(masked, [], NOWHERE, (path) => secrets.find(([p]) => samePath(p, path))?.[1]) as T;
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
