/**
 * `count_tokens` for a provider with no native count (docs/anthropic-messages.md, "Counting tokens"): an estimate
 * made without calling the provider, marked `x-gateway-token-count: estimate` on the answer. A quarter of the
 * characters of every text the model would read (system, message text, tool calls and results, tool definitions),
 * plus IMAGE_TOKENS for each image or document: their size cannot be known without decoding them.
 */
import type { Json, JsonObject } from '@gateway/sdk';

export const CHARS_PER_TOKEN = 4;
/** What Anthropic documents for an image of about 1.15 megapixels, the largest it takes unscaled. */
export const IMAGE_TOKENS = 1600;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function measure(value: Json | undefined, acc: { chars: number; media: number }): void {
  if (typeof value === 'string') acc.chars += value.length;
  else if (Array.isArray(value)) for (const v of value) measure(v, acc);
  else if (isObject(value)) {
    if (value.type === 'image' || value.type === 'document') {
      acc.media++;
      return;
    }
    if (value.type === 'text') acc.chars += typeof value.text === 'string' ? value.text.length : 0;
    else if (value.type === 'tool_use') acc.chars += String(value.name ?? '').length + JSON.stringify(value.input ?? {}).length;
    else if (value.type === 'tool_result') measure(value.content, acc);
    else if (value.type === 'thinking') acc.chars += typeof value.thinking === 'string' ? value.thinking.length : 0;
  }
}

/** The estimated `input_tokens` of a count_tokens body. */
export function estimateInputTokens(body: JsonObject): number {
  const acc = { chars: 0, media: 0 };
  measure(body.system, acc);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObject(m)) measure(m.content, acc);
  if (Array.isArray(body.tools)) acc.chars += JSON.stringify(body.tools).length;
  return Math.ceil(acc.chars / CHARS_PER_TOKEN) + acc.media * IMAGE_TOKENS;
}
