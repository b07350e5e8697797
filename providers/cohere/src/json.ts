/** Small readers for untyped JSON, shared by the Cohere translators. */
import type { Json, JsonObject } from '@gateway/sdk';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A finite number, or 0. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Absent and `null` both mean "not given" in an OpenAI body. */
export function given<T extends Json>(value: T | undefined): value is T {
  return value !== undefined && value !== null;
}

/** The text of OpenAI content: a string, or the `text` of its text parts joined. */
export function plainText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) if (isObject(part) && typeof part.text === 'string') out += part.text;
  return out;
}
