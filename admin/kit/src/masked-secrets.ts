/**
 * Credentials inside stored JSON (a saved config's provider keys, a guardrail check's `apiKey` or webhook headers):
 * stored sealed apart from the document, never answered back, never put in the audit log. The document keeps
 * MASK where a secret was; a client that sends MASK back (GET, edit, PUT) keeps the stored secret at that path, as
 * long as the fields that decide where it is sent are unchanged. Which keys are secrets and which decide where they
 * go comes from the loaded plugins' declarations (`DocumentFields`, declared-fields.ts).
 */
import type { Json, JsonObject } from '@gateway/sdk';
import type { SealedAt, SecretBox } from './crypto.ts';
import { changedDestinations, type DocumentFields } from './declared-fields.ts';

export const MASK = '********';

/** Keys whose every member is a credential (HTTP headers of webhook-style checks). */
const SECRET_MAPS: ReadonlySet<string> = new Set(['headers']);

/**
 * A secret's destination is read from the object that holds it and from the ancestors it inherits from through these
 * keys: a config target inherits `custom_host` from its parent (`targets`), and a hook check's `parameters` are sent
 * by the check its `id` names.
 */
const INHERITED_THROUGH: ReadonlySet<string> = new Set(['targets', 'parameters']);

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

/**
 * A key both secret and a destination (an external id) counts as a destination by its value as it stands in the
 * document: MASK on both sides when it was sent back, so only a new value changes where the other secrets go.
 */
function destinationOf(object: JsonObject, inherited: Destination, fields: DocumentFields): Destination {
  let out: Record<string, Json> | undefined;
  for (const [key, child] of Object.entries(object))
    if (fields.destinations.has(key) && child !== undefined) (out ??= { ...inherited })[key] = child;
  return out ?? inherited;
}

/** `cleared`: the secret is not kept when its destination changes (`clearedOnChange`; header maps always). */
type Visit = (path: JsonPath, value: Json, destination: Destination, cleared: boolean) => Json | undefined;

/** Visits every secret position: `at` is called with the path, the value found there and where it is sent. */
function walk(value: Json, path: (string | number)[], inherited: Destination, fields: DocumentFields, at: Visit): Json {
  if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i], inherited, fields, at));
  if (!isObject(value)) return value;
  const destination = destinationOf(value, inherited, fields);
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, key];
    if (fields.secretKeys.has(key) && child !== null) {
      out[key] = at(here, child, destination, fields.clearedOnChange.has(key)) ?? child;
    } else if (SECRET_MAPS.has(key) && typeof child === 'string') {
      out[key] = at(here, child, destination, true) ?? child; // headers given as a JSON string
    } else if (SECRET_MAPS.has(key) && isObject(child)) {
      const map: JsonObject = {};
      for (const [name, v] of Object.entries(child)) map[name] = v === null ? v : (at([...here, name], v, destination, true) ?? v);
      out[key] = map;
    } else {
      out[key] = walk(child, here, INHERITED_THROUGH.has(key) ? destination : NOWHERE, fields, at);
    }
  }
  return out;
}

/** The document with MASK in place of every secret, and the secrets apart. */
export function splitSecrets<T extends Json>(document: T, fields: DocumentFields): { masked: T; secrets: SecretPairs } {
  const secrets: SecretPairs = [];
  const masked = walk(document, [], NOWHERE, fields, (path, value) => {
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
export function restoreMasked<T extends Json>(
  document: T,
  previous: StoredDocument,
  prefix: string,
  fields: DocumentFields,
): { value: T; problems: string[] } {
  const problems: string[] = [];
  const wentTo = new Map<string, Destination>();
  walk(previous.masked, [], NOWHERE, fields, (path, _value, destination) => {
    wentTo.set(formatPath(path), destination);
    return undefined;
  });
  const value = walk(document, [], NOWHERE, fields, (path, found, destination, cleared) => {
    if (found !== MASK) return undefined;
    const name = formatPath(prefix ? [prefix, ...path] : path);
    const stored = previous.secrets.find(([p]) => samePath(p, path));
    if (!stored) {
      problems.push(`${name}: ${JSON.stringify(MASK)} stands for a stored secret, and none is stored at this path`);
      return undefined;
    }
    const before = wentTo.get(formatPath(path)) ?? NOWHERE;
    const changed = cleared ? changedDestinations(before, destination, new Set([...Object.keys(before), ...Object.keys(destination)])) : [];
    if (changed.length > 0) {
      problems.push(`${name}: ${changed.join(', ')} changed, so the stored secret is not kept: enter it again (a stored secret is only sent where it was entered for)`);
      return undefined;
    }
    return stored[1];
  }) as T;
  return { value, problems };
}

/**
 * Puts sealed secrets back into a masked document (loading for the hot path): each at the path it was taken from,
 * whatever the loaded plugins declare now (a secret sealed is a secret restored).
 */
export function joinSecrets<T extends Json>(masked: T, secrets: SecretPairs): T {
  if (secrets.length === 0) return masked;
  const out = structuredClone(masked);
  for (const [path, secret] of secrets) {
    let parent: Json = out;
    for (const part of path.slice(0, -1)) parent = parent !== null && typeof parent === 'object' ? ((parent as Record<string | number, Json>)[part] ?? null) : null;
    const last = path[path.length - 1];
    if (last !== undefined && parent !== null && typeof parent === 'object') (parent as Record<string | number, Json>)[last] = secret;
  }
  return out;
}

/** A document as stored: masked, with its secrets sealed apart for the row and column `at` (null when it has none). */
export function sealSecrets<T extends Json>(document: T, box: () => SecretBox, at: SealedAt, fields: DocumentFields): { masked: T; sealed: string | null } {
  const { masked, secrets } = splitSecrets(document, fields);
  return { masked, sealed: secrets.length > 0 ? box().sealJson(secrets, at) : null };
}

/** The secrets of a stored document (`sealSecrets`' `sealed`, from `at`); the box is asked for only when there are some. */
export function openSecrets(sealed: string | null, box: () => SecretBox, at: SealedAt): SecretPairs {
  return sealed ? box().openJson<SecretPairs>(sealed, at) : [];
}
