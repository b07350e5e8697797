/**
 * The catalogues of our provider packages from a LiteLLM-format compilation (docs/pricing.md, "Refreshing"). Pure:
 * the same compilation, options and previous files always give the same catalogues, byte for byte once printed.
 *
 * Rules:
 * - an entry feeds a package when its `litellm_provider` is in that package's feeds (mapping.ts) and its `mode` is
 *   chat, completion, responses or embedding; the key loses LiteLLM's prefix and becomes our adapter's id, or is left
 *   out when it names a variant (a region, a commitment term, a size band, an image size);
 * - two entries giving one id: identical prices are one; different prices are a conflict, settled by the first feed
 *   in the mapping's order, then the key that sorts first, and reported;
 * - a dated id (`-2024-08-06`, `-20241022`, `@20241022`) whose undated id has the same prices is left out: the
 *   pricing plugin prices a dated id by its undated one (plugins/pricing/src/match.ts);
 * - merging (`merge`): the previous file's prices win over the compilation's kind by kind (hand-verified prices
 *   kept; a kind the file does not state, such as a newer 1-hour cache write price, comes from the compilation), its
 *   other models and its aliases stay; without it the file holds the compilation's prices alone.
 */
import type { ModelPrices, PricingCatalogue } from '@gateway/sdk';
import { type LitellmFeed, PACKAGES, PRICED_MODES, SELF_HOSTED, SIZE_BAND } from './mapping.ts';
import { ordered, pricesOf, samePrices } from './convert.ts';

export interface ImportOptions {
  /** Where the compilation was read, named in each note: `github.com/<owner>/<repo>`. */
  readonly repo: string;
  /** The commit it was read at (40 hex digits). */
  readonly commit: string;
  /** The day its prices are of (YYYY-MM-DD): the catalogues' `as_of`. */
  readonly asOf: string;
  /** Packages whose previous file's entries are kept over the compilation's (hand-verified). */
  readonly merge: ReadonlySet<string>;
}

export interface ImportResult {
  readonly catalogues: ReadonlyMap<string, PricingCatalogue>;
  /** Ids two entries priced differently, with the key whose prices were taken. */
  readonly conflicts: readonly string[];
}

const DATED = /(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})$/;

interface Candidate {
  readonly prices: ModelPrices;
  readonly feedIndex: number;
  readonly key: string;
}

function idOf(feed: LitellmFeed, key: string): string | undefined {
  if (SIZE_BAND.test(key)) return undefined;
  const prefix = feed.prefixes.find((p) => key.startsWith(p));
  const bare = prefix ? key.slice(prefix.length) : key;
  if (!bare) return undefined;
  return feed.id ? feed.id(bare) : bare;
}

function modelsOf(pkg: string, compilation: Readonly<Record<string, unknown>>, conflicts: string[]): Record<string, ModelPrices> {
  const { feeds } = PACKAGES[pkg]!;
  const byProvider = new Map(feeds.map((f, i) => [f.provider, i]));
  const found = new Map<string, Candidate[]>();
  for (const key of Object.keys(compilation).sort()) {
    const entry = compilation[key];
    if (!entry || typeof entry !== 'object') continue;
    const e = entry as Record<string, unknown>;
    const feedIndex = typeof e.litellm_provider === 'string' ? byProvider.get(e.litellm_provider) : undefined;
    if (feedIndex === undefined || typeof e.mode !== 'string' || !PRICED_MODES.has(e.mode)) continue;
    const id = idOf(feeds[feedIndex]!, key);
    const prices = id === undefined ? undefined : pricesOf(e, { searchFee: pkg === 'perplexity-ai' });
    if (id === undefined || prices === undefined) continue;
    found.set(id, [...(found.get(id) ?? []), { prices, feedIndex, key }]);
  }
  const models: Record<string, ModelPrices> = {};
  for (const [id, candidates] of found) {
    const chosen = [...candidates].sort((a, b) => a.feedIndex - b.feedIndex || (a.key < b.key ? -1 : 1))[0]!;
    if (candidates.some((c) => !samePrices(c.prices, chosen.prices)))
      conflicts.push(`${pkg}: ${id} priced differently by ${candidates.map((c) => c.key).join(', ')}; took ${chosen.key}`);
    models[id] = chosen.prices;
  }
  for (const id of Object.keys(models)) {
    const undated = id.replace(DATED, '');
    if (undated !== id && models[undated] && samePrices(models[undated], models[id]!)) delete models[id];
  }
  return models;
}

const sortedRecord = <T>(record: Readonly<Record<string, T>>): Record<string, T> =>
  Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]!]));

function noteOf(pkg: string, options: ImportOptions, count: number, kept: readonly string[]): string {
  const { rule } = PACKAGES[pkg]!;
  const read = `read by scripts/import-prices.ts from LiteLLM's compilation of list prices (model_prices_and_context_window.json, github.com/BerriAI/litellm) in ${options.repo} at commit ${options.commit}`;
  const parts =
    count === 0 && kept.length === 0
      ? [
          `No prices: LiteLLM's compilation (model_prices_and_context_window.json) in ${options.repo} at commit ${options.commit} lists none of this provider's models, and no price is written here without a source. Calls cost null until its models are added (or an integration gives its models their own prices).`,
        ]
      : [
          `Standard list prices ${read}; the compilation is not the provider's page, which remains the reference.`,
          'Only per-token prices and per-request fees are kept: batch, flex and priority tiers, prices above a context threshold, and per-image or per-second prices are not modelled. Models not listed cost null.',
          ...(rule ? [rule] : []),
          ...(kept.length ? [`Prices kept from this file's earlier hand-verified version where the compilation lacks the model or differs (import with merge; this file's git history says where they were read): ${kept.join(', ')}.`] : []),
        ];
  return parts.join(' ');
}

/** The catalogue of each package in the mapping, and of each self-hosted package. */
export function importCatalogues(
  compilation: Readonly<Record<string, unknown>>,
  previous: ReadonlyMap<string, PricingCatalogue>,
  options: ImportOptions,
): ImportResult {
  const conflicts: string[] = [];
  const catalogues = new Map<string, PricingCatalogue>();
  for (const pkg of Object.keys(PACKAGES).sort()) {
    const models = modelsOf(pkg, compilation, conflicts);
    const before = options.merge.has(pkg) ? previous.get(pkg) : undefined;
    const kept: string[] = [];
    for (const [id, prices] of Object.entries(before?.models ?? {})) {
      // The file's prices win kind by kind; kinds it does not state come from the compilation.
      const merged = ordered({ ...models[id], ...prices });
      if (!models[id] || !samePrices(merged, models[id])) kept.push(id);
      models[id] = merged;
    }
    const aliases = Object.fromEntries(Object.entries(before?.aliases ?? {}).filter(([, target]) => target in models));
    catalogues.set(pkg, {
      source: PACKAGES[pkg]!.source,
      as_of: options.asOf,
      currency: 'USD',
      unit: 'USD per 1M tokens',
      note: noteOf(pkg, options, Object.keys(models).length, kept.sort()),
      models: sortedRecord(models),
      ...(Object.keys(aliases).length ? { aliases: sortedRecord(aliases) } : {}),
    });
  }
  for (const pkg of Object.keys(SELF_HOSTED).sort())
    catalogues.set(pkg, {
      source: SELF_HOSTED[pkg]!,
      as_of: options.asOf,
      currency: 'USD',
      unit: 'USD per 1M tokens',
      note: 'A server you run yourself: no list price, so calls cost null. Give an integration\'s models their own prices to count what they cost you.',
      models: sortedRecord(options.merge.has(pkg) ? (previous.get(pkg)?.models ?? {}) : {}),
    });
  return { catalogues, conflicts };
}

/** A catalogue as its file holds it: two-space JSON and a final newline. */
export const printCatalogue = (catalogue: PricingCatalogue): string => `${JSON.stringify(catalogue, null, 2)}\n`;
