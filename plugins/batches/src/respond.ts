/** Small shared pieces: ids, JSON answers, list pages, query numbers, metadata. */
import { Errors, type JsonObject } from '@gateway/sdk';

/** `<prefix><24 hex>`: short enough for an id column (36), unguessable. */
export function newId(prefix: string): string {
  return prefix + crypto.randomUUID().replaceAll('-', '').slice(0, 24);
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function json(value: unknown, status = 200): Response {
  return Response.json(value, { status });
}

/** `{object: 'list', data, has_more, first_id, last_id}` of one page (`rows` holds up to limit + 1). */
export function listPage<T extends { id: string }>(rows: T[], limit: number): JsonObject {
  const data = rows.slice(0, limit);
  return {
    object: 'list',
    data: data as unknown as JsonObject[],
    has_more: rows.length > limit,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  } as JsonObject;
}

/** An integer query parameter in [min, max], or the default when absent; 400 naming it otherwise. */
export function queryInt(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max)
    throw Errors.badRequest(`${name} must be an integer from ${min} to ${max}`, name);
  return value;
}

/** SPEC.md: at most 16 pairs, keys up to 64 characters, string values up to 512. */
export function checkMetadata(value: unknown, param = 'metadata'): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw Errors.badRequest(`${param} must be an object of strings`, param);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 16) throw Errors.badRequest(`${param} may hold at most 16 pairs`, param);
  for (const [key, v] of entries) {
    if (key.length > 64) throw Errors.badRequest(`${param} keys may be at most 64 characters`, `${param}.${key.slice(0, 64)}`);
    if (typeof v !== 'string') throw Errors.badRequest(`${param}.${key} must be a string`, `${param}.${key}`);
    if (v.length > 512) throw Errors.badRequest(`${param} values may be at most 512 characters`, `${param}.${key}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/** A JSON object body, or 400. */
export function parseBody(bytes: Uint8Array | undefined): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()));
  } catch {
    throw Errors.malformedJson('The request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw Errors.badRequest('The request body must be a JSON object');
  return value as JsonObject;
}

/** The path after a prefix, split on '/' (`/batches/b1/cancel` → ['b1', 'cancel']). */
export function segments(path: string, prefix: string): string[] {
  const rest = path.slice(prefix.length);
  return rest.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
}
