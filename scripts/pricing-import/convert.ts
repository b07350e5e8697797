/**
 * One LiteLLM entry (USD per token, LiteLLM's field names) as our `ModelPrices` (USD per 1M tokens, our token kinds).
 * Only the standard tier's per-token prices and per-request fees are read: batch, flex and priority tiers, prices
 * above a context threshold (`*_above_200k_tokens`), per-image, per-pixel, per-second and per-character prices have
 * no token kind of ours and are left out. Pure.
 */
import type { ModelPrices, TokenKind } from '@gateway/sdk';
import { TOKEN_KINDS } from '@gateway/sdk';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** LiteLLM's per-token fields by our kind, for chat, completion and responses models. */
const PER_TOKEN: readonly (readonly [TokenKind, readonly string[]])[] = [
  ['input', ['input_cost_per_token']],
  ['cache_read_input', ['cache_read_input_token_cost', 'input_cost_per_token_cache_hit']],
  ['cache_write_input', ['cache_creation_input_token_cost']],
  ['cache_write_input_1h', ['cache_creation_input_token_cost_above_1hr']],
  ['audio_input', ['input_cost_per_audio_token']],
  ['image_input', ['input_cost_per_image_token']],
  ['output', ['output_cost_per_token']],
  ['reasoning', ['output_cost_per_reasoning_token']],
  ['audio_output', ['output_cost_per_audio_token']],
];

/** USD per token → USD per 1M tokens, rounded to 12 significant digits (2.5e-6 × 1e6 is not exactly 2.5 in binary). */
export function perMillion(usdPerToken: number): number {
  return Number((usdPerToken * 1_000_000).toPrecision(12));
}

const price = (entry: Record<string, unknown>, field: string): number | undefined => {
  const v = entry[field];
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
};

/**
 * LiteLLM writes 0 both for a free model and for a price it does not know (its `ollama` entries, `openrouter/auto`,
 * whose price is the routed model's): an entry priced 0 throughout is left out, so its calls cost null (unknown)
 * rather than a 0 that may be false. A free model can be given its 0 prices by an integration.
 */
const allZero = (prices: ModelPrices) => Object.values(prices).every((v) => v === 0);

/**
 * The prices of one entry, or undefined when it has none we can use (no per-token input price, or all zero). `mode` embedding:
 * the input price is the `embedding` kind's. `searchFee`: the default (low) search context fee as `per_request`
 * (Perplexity's Sonar models charge it on every request; elsewhere LiteLLM's field prices a web-search tool call,
 * which is not charged on every request).
 */
export function pricesOf(entry: Record<string, unknown>, options: { searchFee: boolean }): ModelPrices | undefined {
  const out: Mutable<ModelPrices> = {};
  if (entry.mode === 'embedding') {
    const input = price(entry, 'input_cost_per_token');
    if (input === undefined || input === 0) return undefined;
    out.embedding = perMillion(input);
    return out;
  }
  for (const [kind, fields] of PER_TOKEN) {
    for (const field of fields) {
      const v = price(entry, field);
      if (v !== undefined) {
        out[kind] = perMillion(v);
        break;
      }
    }
  }
  if (out.input === undefined) return undefined;
  const perRequest = price(entry, 'input_cost_per_request') ?? price(entry, 'input_cost_per_query');
  const search = entry.search_context_cost_per_query as Record<string, unknown> | undefined;
  const searchLow = options.searchFee && search && typeof search === 'object' ? price(search, 'search_context_size_low') : undefined;
  if (perRequest !== undefined || searchLow !== undefined) out.per_request = Number(((perRequest ?? 0) + (searchLow ?? 0)).toPrecision(12));
  return allZero(out) ? undefined : ordered(out);
}

/** The kinds in TOKEN_KINDS order, then per_request: the same prices always print the same. */
export function ordered(prices: ModelPrices): ModelPrices {
  const out: Mutable<ModelPrices> = {};
  for (const kind of [...TOKEN_KINDS, 'per_request'] as const) if (prices[kind] !== undefined) out[kind] = prices[kind];
  return out;
}

export const samePrices = (a: ModelPrices, b: ModelPrices): boolean => JSON.stringify(ordered(a)) === JSON.stringify(ordered(b));
