/**
 * Token usage from an answer, read once when the answer is complete (never on the request's path): a JSON answer's
 * `usage`, a stream's last `usage` object (seen by the stream processor), or for a passthrough stream the last
 * `data:` event of its captured text that carries one.
 */
import type { JsonObject, TokenUsage } from '@gateway/sdk';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : null);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Details = Omit<TokenUsage, 'promptTokens' | 'completionTokens' | 'totalTokens'>;

/** Sets `field` when the value is a count (a detail the answer does not carry stays absent). */
function put(out: Mutable<Details>, field: keyof Details, value: unknown): void {
  const n = num(value);
  if (n !== null) out[field] = n;
}

const objectAt = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/**
 * Anthropic's Messages shape: `input_tokens` beside top-level cache counts, and no `prompt_tokens`. There
 * `input_tokens` counts only the prompt's uncached part (after the last cache breakpoint); the whole prompt is
 * input + cache reads + cache writes (Anthropic, "Prompt caching", tracking cache performance:
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching). OpenAI's names count the cached part inside
 * the prompt (`*_tokens_details.cached_tokens`), as adapters that translate Anthropic's usage do. Told by shape: the
 * core never names a provider, and a native passthrough answer's usage comes as the provider sent it.
 */
function anthropicPrompt(u: Record<string, unknown>, input: number | null): number | null {
  if (input === null || u.prompt_tokens !== undefined) return input;
  if (!('cache_read_input_tokens' in u) && !('cache_creation_input_tokens' in u)) return input;
  return input + (num(u.cache_read_input_tokens) ?? 0) + (num(u.cache_creation_input_tokens) ?? 0);
}

/**
 * OpenAI chat/completions names, the responses API's input/output names, and the details both carry
 * (`*_tokens_details`), plus Anthropic-style cache counts (and `cache_creation`'s 1-hour writes), whether an adapter
 * passes them on beside OpenAI's names or a native Messages answer carries them (then added to the prompt, above).
 */
export function normaliseUsage(value: unknown): TokenUsage | undefined {
  const u = objectAt(value);
  if (!u) return undefined;
  const prompt = num(u.prompt_tokens) ?? anthropicPrompt(u, num(u.input_tokens));
  const completion = num(u.completion_tokens) ?? num(u.output_tokens);
  const total = num(u.total_tokens) ?? (prompt !== null && completion !== null ? prompt + completion : null);
  if (prompt === null && completion === null && total === null) return undefined;
  const usage: Mutable<TokenUsage> = { promptTokens: prompt, completionTokens: completion, totalTokens: total };
  const input = objectAt(u.prompt_tokens_details) ?? objectAt(u.input_tokens_details);
  const output = objectAt(u.completion_tokens_details) ?? objectAt(u.output_tokens_details);
  if (input) {
    put(usage, 'cachedInputTokens', input.cached_tokens);
    put(usage, 'audioInputTokens', input.audio_tokens);
    put(usage, 'imageInputTokens', input.image_tokens);
  }
  if (usage.cachedInputTokens === undefined) put(usage, 'cachedInputTokens', u.cache_read_input_tokens);
  put(usage, 'cacheWriteInputTokens', u.cache_creation_input_tokens);
  // Anthropic's split of the writes by lifetime: the 1-hour ones are billed higher.
  put(usage, 'cacheWrite1hInputTokens', objectAt(u.cache_creation)?.ephemeral_1h_input_tokens);
  if (output) {
    put(usage, 'reasoningTokens', output.reasoning_tokens);
    put(usage, 'audioOutputTokens', output.audio_tokens);
    put(usage, 'acceptedPredictionTokens', output.accepted_prediction_tokens);
    put(usage, 'rejectedPredictionTokens', output.rejected_prediction_tokens);
  }
  return usage;
}

/** `usage` at the top, or inside `response` (responses API stream events). */
function fromObject(value: unknown): TokenUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const o = value as { usage?: unknown; response?: { usage?: unknown } };
  return normaliseUsage(o.usage) ?? normaliseUsage(o.response?.usage);
}

/**
 * The usage object of a parsed JSON answer, the one `extractUsage` would read from its text (`usage`, else
 * `response.usage`): for a caller that parsed the answer anyway.
 */
export function usageObjectOf(value: unknown): JsonObject | undefined {
  const o = objectAt(value);
  if (!o) return undefined;
  if (normaliseUsage(o.usage)) return o.usage as JsonObject;
  const nested = objectAt(o.response)?.usage;
  return normaliseUsage(nested) ? (nested as JsonObject) : undefined;
}

/** The usage object a stream event carries (`usage`, or the responses API's `response.usage`), unparsed. */
export function usageOfEvent(event: unknown): JsonObject | undefined {
  const o = objectAt(event);
  if (!o) return undefined;
  return (objectAt(o.usage) ?? objectAt(objectAt(o.response)?.usage)) as JsonObject | undefined;
}

// ---- reading one `"usage": {…}` out of JSON text without parsing the rest -----------------------------------------

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
/** A usage object is a few hundred characters; more means something else (parse the whole text instead). */
const MAX_USAGE_CHARS = 4096;
/** Text after the usage object that is scanned to prove it is top-level; more: parse the whole text instead. */
const MAX_TAIL_CHARS = 16_384;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Whether the character at `at` is preceded by an odd number of backslashes (escaped inside a string). */
function escaped(text: string, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) n++;
  return n % 2 === 1;
}

/** Index just after the JSON string whose opening quote is at `at`, or -1 when it does not end. */
function stringEnd(text: string, at: number): number {
  for (let from = at + 1; ; ) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    if (!escaped(text, q)) return q + 1;
    from = q + 1;
  }
}

/**
 * Walks JSON structure from `from` to `to`, skipping strings. With `stopAtZero`, returns the index just after the
 * bracket that brings the depth back to 0 (the end of the value opened at `from`); otherwise returns the depth at
 * `to`, or NaN when the depth fell below -1 before the last bracket (the value was not a top-level member).
 */
function walk(text: string, from: number, to: number, stopAtZero: boolean): number {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0 || end > to) return NaN;
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (stopAtZero && depth === 0) return i + 1;
      if (!stopAtZero && depth < 0 && skipSpace(text, i + 1) < to) return NaN;
    }
  }
  return stopAtZero ? NaN : depth;
}

/**
 * The top-level `usage` of a JSON object text, found from the end (`lastIndexOf`) and parsed alone. Undefined when
 * that cannot be shown cheaply (nested candidates only, a long tail after it, `usage` not an object, …): the caller
 * then parses the whole text.
 */
function topLevelUsage(text: string): TokenUsage | undefined {
  const last = text.length - 1;
  let at = text.lastIndexOf('"usage"');
  while (at >= 0) {
    // Only a key: an unescaped `"usage"` followed by a colon (a string value is followed by `,`, `]` or `}`).
    if (!escaped(text, at)) {
      const colon = skipSpace(text, at + 7);
      if (text.charCodeAt(colon) === COLON) {
        const start = skipSpace(text, colon + 1);
        if (text.charCodeAt(start) !== OPEN_BRACE) return undefined;
        const end = walk(text, start, Math.min(text.length, start + MAX_USAGE_CHARS), true);
        if (Number.isNaN(end)) return undefined;
        if (text.length - end > MAX_TAIL_CHARS) return undefined;
        // Top-level: what follows closes exactly one object (the document), with that `}` as the last character.
        let close = last;
        while (close > end && isSpace(text.charCodeAt(close))) close--;
        if (text.charCodeAt(close) === CLOSE_BRACE && walk(text, end, close + 1, false) === -1) {
          try {
            return normaliseUsage(JSON.parse(text.slice(start, end)));
          } catch {
            return undefined;
          }
        }
      }
    }
    if (text.length - at > MAX_TAIL_CHARS) return undefined;
    at = at > 0 ? text.lastIndexOf('"usage"', at - 1) : -1;
  }
  return undefined;
}

/** Usage of one JSON text (an answer or one SSE event): the cheap read first, the whole parse when it cannot tell. */
function fromJson(text: string): TokenUsage | undefined {
  // Without the key there is no usage to find: no parse at all.
  if (text.lastIndexOf('"usage"') < 0) return undefined;
  const usage = topLevelUsage(text);
  if (usage) return usage;
  try {
    return fromObject(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Scans backwards for `"usage"` so that only the few last events are parsed, however long the stream. */
function fromSse(body: string): TokenUsage | undefined {
  let at = body.lastIndexOf('"usage"');
  while (at >= 0) {
    const lineStart = body.lastIndexOf('\n', at) + 1;
    const lineEnd = body.indexOf('\n', at);
    const line = body.slice(lineStart, lineEnd < 0 ? body.length : lineEnd).trim();
    if (line.startsWith('data:')) {
      // A cut or non-JSON event gives nothing: look further back.
      const usage = fromJson(line.slice(5));
      if (usage) return usage;
    }
    if (lineStart === 0) return undefined;
    at = body.lastIndexOf('"usage"', lineStart - 1);
  }
  return undefined;
}

/** The usage of an answer's text: a JSON answer, or SSE events (the last that carries usage). */
export function extractUsage(body: string | undefined): TokenUsage | undefined {
  if (!body) return undefined;
  const first = body.charCodeAt(skipSpace(body, 0));
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return fromJson(body);
  return fromSse(body);
}
