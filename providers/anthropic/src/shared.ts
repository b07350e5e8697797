/** Constants and small helpers shared by the Anthropic translators. */
import type { Json, JsonObject, TranslateContext } from '@gateway/sdk';

/** The public base URL that a custom host replaces (INTERFACE.md). */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** The `anthropic-version` header every call carries unless the client forwards its own. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** The body-level `anthropic_version` of Vertex AI's rawPredict / streamRawPredict. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
/** Anthropic requires `max_tokens`; this is sent when the client gave neither max_tokens nor max_completion_tokens. */
export const DEFAULT_MAX_TOKENS = 4096;
/**
 * JSON mode: Anthropic has no JSON switch, so `response_format` becomes a tool of this name whose input schema is the
 * wanted JSON (`{type: "object"}` for json_object), forced with `tool_choice: {type: "tool", name}` — the approach
 * Anthropic documents for JSON output. A call to this tool comes back as the message content, not as a tool call.
 */
export const JSON_TOOL_NAME = 'json_response';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * What the answer mapping must know about the request that `TranslateContext` does not carry (stream_options,
 * the legacy `functions` form). Kept per translation context, never on the request: the core hands the same context
 * object to `request`, `response` and `stream.toChunks` of one attempt.
 */
export interface RequestFacts {
  /** `stream_options.include_usage`: end the stream with a usage chunk. */
  includeUsage: boolean;
  /** The client used `functions` / `function_call`: answer with `function_call`, not `tool_calls`. */
  legacyFunctions: boolean;
}

const facts = new WeakMap<TranslateContext, RequestFacts>();

export function rememberFacts(ctx: TranslateContext, value: RequestFacts): void {
  facts.set(ctx, value);
}

export function factsOf(ctx: TranslateContext): RequestFacts {
  return facts.get(ctx) ?? { includeUsage: false, legacyFunctions: false };
}

/** Drops `undefined` values so the result is a JSON object. */
export function compact(fields: Record<string, Json | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}
