/**
 * From a fetched secret to the value of one mapping: `secret_key` picks a top-level key of a JSON secret (AWS, Azure)
 * or of the KV v2 data map (Vault); `value_format` `string` gives a string (objects as their JSON text), `json`
 * parses a string holding JSON. Failures name the key, never the value.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import type { FetchedSecret } from './clients/types.ts';
import { ManagerFailure } from './errors.ts';

export type ValueFormat = 'string' | 'json';

function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

export function pick(secret: FetchedSecret, key: string | undefined | null, format: ValueFormat = 'string'): Json {
  let raw: Json;
  if (key) {
    const map = secret.kind === 'map' ? secret.value : parseObject(secret.value);
    if (!map) throw new ManagerFailure(`secret_key "${key}" was given but the secret is not a JSON object`);
    if (!Object.hasOwn(map, key)) throw new ManagerFailure(`the secret has no key "${key}"`);
    raw = map[key] as Json;
  } else {
    raw = secret.value;
  }
  if (format === 'string') return typeof raw === 'string' ? raw : JSON.stringify(raw);
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as Json;
  } catch {
    throw new ManagerFailure(`value_format is json but the value${key ? ` of "${key}"` : ''} is not valid JSON`);
  }
}
