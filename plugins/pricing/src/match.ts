/**
 * Which catalogue entry prices a model id (README, "Cost"): the id itself, else a declared alias, else the id
 * without a trailing snapshot date (`gpt-4o-2024-08-06` → `gpt-4o`, `claude-3-5-haiku@20241022` →
 * `claude-3-5-haiku`) looked up the same two ways. No prefix guessing: `gpt-4o-audio-preview` is not `gpt-4o`.
 */
import type { ModelPrices, PricingCatalogue } from '@gateway/sdk';

/** `-2024-08-06`, `-20241022` or `@20241022` at the end of an id. */
const SNAPSHOT = /(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})$/;

function exact(catalogue: PricingCatalogue, id: string): string | undefined {
  if (Object.hasOwn(catalogue.models, id)) return id;
  const alias = catalogue.aliases && Object.hasOwn(catalogue.aliases, id) ? catalogue.aliases[id] : undefined;
  return alias;
}

/** The catalogue id pricing `model`, or undefined. */
export function matchModel(catalogue: PricingCatalogue, model: string): string | undefined {
  const found = exact(catalogue, model);
  if (found !== undefined) return found;
  const undated = model.replace(SNAPSHOT, '');
  return undated === model ? undefined : exact(catalogue, undated);
}

/** A provider's catalogue with its lookups remembered (a model is matched once, then found in a Map). */
export class PriceList {
  private readonly found = new Map<string, { id: string; prices: ModelPrices } | null>();
  /** Models looked up at most: a client can send any model name, the memory must not grow with them. */
  private static readonly MAX_REMEMBERED = 10_000;

  constructor(readonly catalogue: PricingCatalogue) {}

  lookup(model: string): { id: string; prices: ModelPrices } | undefined {
    let entry = this.found.get(model);
    if (entry === undefined) {
      const id = matchModel(this.catalogue, model);
      entry = id === undefined ? null : { id, prices: this.catalogue.models[id]! };
      if (this.found.size < PriceList.MAX_REMEMBERED) this.found.set(model, entry);
    }
    return entry ?? undefined;
  }
}
