/**
 * What `stream_options.include_usage` adds to an OpenAI stream, for a stream where the gateway asked for usage the
 * client did not ask for: the client must get the bytes it would have got without the option. The option adds a last
 * chunk with empty `choices` and the `usage` object, and `"usage": null` on every other chunk (OpenAI's API reference,
 * `stream_options`).
 */
import type { JsonObject } from '@gateway/sdk';

/** The chunk the option adds: `choices` empty and a `usage` object. */
export function isUsageOnlyChunk(chunk: JsonObject): boolean {
  const { choices, usage } = chunk;
  return Array.isArray(choices) && choices.length === 0 && typeof usage === 'object' && usage !== null && !Array.isArray(usage);
}

/** `"usage": null` as the last member of the top-level object (OpenAI writes it last): whatever follows closes it. */
const TRAILING_NULL_USAGE = /,\s*"usage"\s*:\s*null(\s*}\s*)$/;

/**
 * The chunk's JSON text without its top-level `"usage": null`, or undefined when it has none. The member is cut out of
 * the text, so every other byte stays as the provider wrote it; a provider that puts it elsewhere gets the chunk
 * re-serialised without it (the same JSON value).
 */
export function withoutNullUsage(payload: string, chunk: JsonObject): string | undefined {
  if (chunk.usage !== null) return undefined;
  const cut = payload.replace(TRAILING_NULL_USAGE, '$1');
  if (cut !== payload) return cut;
  const rest = { ...chunk };
  delete rest.usage;
  return JSON.stringify(rest);
}
