/**
 * The cost of one answer (README, "Cost"): its usage split into disjoint token kinds, each kind at its price (or its
 * fallback's) times the integration's multiplier for it, plus the per-request price. US cents, fractional.
 */
import {
  type CostBreakdown,
  type EndpointKind,
  type ModelPrices,
  PRICE_FALLBACK,
  type PriceMultipliers,
  type TokenKind,
  type TokensByKind,
  type TokenUsage,
} from '@gateway/sdk';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Dollars per 1M tokens → cents per token. */
const CENTS_PER_TOKEN = 100 / 1_000_000;

const nonNegative = (n: number) => Math.max(n, 0);

/**
 * OpenAI-style usage (totals with the parts inside them) as disjoint kinds; an embeddings call's prompt is
 * `embedding`. Undefined when the usage has neither a prompt nor a completion count (nothing to price).
 */
export function splitUsage(usage: TokenUsage, endpoint?: EndpointKind): TokensByKind | undefined {
  const prompt = usage.promptTokens ?? (endpoint === 'embed' ? usage.totalTokens : null);
  const completion = usage.completionTokens;
  if (prompt === null && completion === null) return undefined;
  const out: Mutable<TokensByKind> = {};
  const put = (kind: TokenKind, n: number | undefined) => {
    if (n !== undefined && n > 0) out[kind] = n;
  };
  if (prompt !== null) {
    if (endpoint === 'embed') put('embedding', prompt);
    else {
      const cacheRead = usage.cachedInputTokens ?? 0;
      // The 1-hour writes are a part of the writes (TokenUsage); a usage naming only them still counts them.
      const cacheWrite1h = usage.cacheWrite1hInputTokens ?? 0;
      const cacheWrite = Math.max(usage.cacheWriteInputTokens ?? 0, cacheWrite1h);
      const audio = usage.audioInputTokens ?? 0;
      const image = usage.imageInputTokens ?? 0;
      put('cache_read_input', cacheRead);
      put('cache_write_input', cacheWrite - cacheWrite1h);
      put('cache_write_input_1h', cacheWrite1h);
      put('audio_input', audio);
      put('image_input', image);
      put('input', nonNegative(prompt - cacheRead - cacheWrite - audio - image));
    }
  }
  if (completion !== null) {
    const reasoning = usage.reasoningTokens ?? 0;
    const audio = usage.audioOutputTokens ?? 0;
    const accepted = usage.acceptedPredictionTokens ?? 0;
    const rejected = usage.rejectedPredictionTokens ?? 0;
    put('reasoning', reasoning);
    put('audio_output', audio);
    put('prediction_accepted', accepted);
    put('prediction_rejected', rejected);
    put('output', nonNegative(completion - reasoning - audio - accepted - rejected));
  }
  return out;
}

/** A kind's price: its own, else its fallback's (PRICE_FALLBACK), else undefined. */
export function priceOf(prices: ModelPrices, kind: TokenKind): number | undefined {
  for (let k: TokenKind | undefined = kind; k !== undefined; k = PRICE_FALLBACK[k]) {
    const price = prices[k];
    if (price !== undefined) return price;
  }
  return undefined;
}

/**
 * The cost of `tokens` at `prices` with `multiplier`, or null when a kind used has no price (nor a fallback): a
 * part left out would show a cost lower than the bill.
 */
export function costOf(
  tokens: TokensByKind,
  prices: ModelPrices,
  multiplier: PriceMultipliers | undefined,
  meta: Pick<CostBreakdown, 'priced' | 'model'>,
): CostBreakdown | null {
  const parts: Mutable<CostBreakdown['parts']> = {};
  let total = 0;
  for (const kind of Object.keys(tokens) as TokenKind[]) {
    const count = tokens[kind]!;
    const price = priceOf(prices, kind);
    if (price === undefined) return null;
    const cents = count * price * CENTS_PER_TOKEN * (multiplier?.[kind] ?? 1);
    parts[kind] = cents;
    total += cents;
  }
  if (prices.per_request !== undefined) {
    parts.per_request = prices.per_request * 100;
    total += parts.per_request;
  }
  return { total, parts, ...meta };
}
