// The pricing's parts: a catalogue checked at load (a bad file is named), which entry prices a model id, usage split
// into disjoint token kinds, the cost of each kind (and its fallback), unknown models and unpriced kinds as null,
// an integration's own prices and its multipliers.
import { describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IntegrationPrices, PricingCatalogue, TokenUsage } from '@gateway/sdk';
import { costOf, splitUsage } from './cost.ts';
import { loadCatalogue } from './load.ts';
import { matchModel, PriceList } from './match.ts';
import { createPricing } from './pricing.ts';

const catalogue: PricingCatalogue = {
  source: 'https://example.test/pricing',
  as_of: '2026-11-26',
  currency: 'USD',
  unit: 'USD per 1M tokens',
  models: {
    'chat-1': { input: 2, cache_read_input: 0.5, cache_write_input: 2.5, output: 8, reasoning: 10, audio_input: 40, audio_output: 80 },
    'chat-1-mini': { input: 0.4, output: 1.6 },
    'embed-1': { embedding: 0.02 },
    'search-1': { input: 1, output: 1, per_request: 0.005 },
  },
  aliases: { 'chat-latest': 'chat-1' },
};

const usage = (u: Partial<TokenUsage>): TokenUsage => ({ promptTokens: null, completionTokens: null, totalTokens: null, ...u });
const lists = new Map([['acme', new PriceList(catalogue)]]);

describe('loadCatalogue', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-pricing-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return pathToFileURL(path);
  };

  test('a valid file loads', () => {
    expect(loadCatalogue('acme', file('ok.json', JSON.stringify(catalogue))).models['chat-1']?.input).toBe(2);
  });

  test('a bad file fails naming the file, the provider and the fault', () => {
    const bad = { ...catalogue, models: { 'chat-1': { input: -1, outptu: 3 } } };
    const url = file('bad.json', JSON.stringify(bad));
    expect(() => loadCatalogue('acme', url)).toThrow(/bad\.json \(provider acme\) is not a valid catalogue: .*\/models\/chat-1/);
    expect(() => loadCatalogue('acme', file('broken.json', '{ "source": '))).toThrow(/cannot read .*broken\.json \(provider acme\)/);
    expect(() => loadCatalogue('acme', file('alias.json', JSON.stringify({ ...catalogue, aliases: { x: 'nope' } })))).toThrow(/alias x names nope/);
    expect(() => loadCatalogue('acme', { ...catalogue, currency: 'EUR' } as unknown as PricingCatalogue)).toThrow(/pricing catalogue of provider acme .*\/currency/);
  });
});

describe('matchModel', () => {
  test('exact, then a declared alias, then the id without a snapshot date', () => {
    expect(matchModel(catalogue, 'chat-1')).toBe('chat-1');
    expect(matchModel(catalogue, 'chat-latest')).toBe('chat-1');
    expect(matchModel(catalogue, 'chat-1-2024-08-06')).toBe('chat-1');
    expect(matchModel(catalogue, 'chat-1-mini-20250101')).toBe('chat-1-mini');
    expect(matchModel(catalogue, 'chat-1@20241022')).toBe('chat-1');
  });

  test('no prefix guessing: a variant of a model is not the model', () => {
    expect(matchModel(catalogue, 'chat-1-audio-preview')).toBeUndefined();
    expect(matchModel(catalogue, 'chat-1-mini-x')).toBeUndefined();
    expect(matchModel(catalogue, 'CHAT-1')).toBeUndefined();
    expect(matchModel(catalogue, 'toString')).toBeUndefined();
  });
});

describe('splitUsage', () => {
  test('details come out of their totals: the kinds are disjoint', () => {
    expect(
      splitUsage(usage({ promptTokens: 1000, completionTokens: 500, cachedInputTokens: 300, cacheWriteInputTokens: 100, audioInputTokens: 50, reasoningTokens: 200, audioOutputTokens: 20 })),
    ).toEqual({ input: 550, cache_read_input: 300, cache_write_input: 100, audio_input: 50, output: 280, reasoning: 200, audio_output: 20 });
  });

  test('1-hour cache writes are a part of the cache writes, priced apart', () => {
    expect(splitUsage(usage({ promptTokens: 1000, completionTokens: 10, cachedInputTokens: 300, cacheWriteInputTokens: 400, cacheWrite1hInputTokens: 150 }))).toEqual({
      input: 300,
      cache_read_input: 300,
      cache_write_input: 250,
      cache_write_input_1h: 150,
      output: 10,
    });
    // Only 1-hour writes: no 5-minute kind; a usage naming the 1-hour writes alone still takes them from the prompt.
    expect(splitUsage(usage({ promptTokens: 100, completionTokens: 1, cacheWriteInputTokens: 60, cacheWrite1hInputTokens: 60 }))).toEqual({ input: 40, cache_write_input_1h: 60, output: 1 });
    expect(splitUsage(usage({ promptTokens: 100, completionTokens: 1, cacheWrite1hInputTokens: 60 }))).toEqual({ input: 40, cache_write_input_1h: 60, output: 1 });
  });

  test("an embeddings call's prompt is embedding tokens; no counts: nothing to price", () => {
    expect(splitUsage(usage({ promptTokens: 8, totalTokens: 8 }), 'embed')).toEqual({ embedding: 8 });
    expect(splitUsage(usage({ totalTokens: 8 }), 'embed')).toEqual({ embedding: 8 });
    expect(splitUsage(usage({ totalTokens: 8 }))).toBeUndefined();
  });
});

describe('cost', () => {
  const pricing = createPricing(lists, undefined);
  const cents = (dollarsPerM: number, tokens: number) => (dollarsPerM * tokens) / 10_000;

  test('each kind at its own price, in US cents', () => {
    const cost = pricing.costOf({
      provider: 'acme',
      model: 'chat-1-2025-01-01',
      usage: usage({ promptTokens: 1000, completionTokens: 500, cachedInputTokens: 300, cacheWriteInputTokens: 100, reasoningTokens: 200 }),
    })!;
    expect(cost.priced).toBe('catalogue');
    expect(cost.model).toBe('chat-1');
    expect(cost.parts.input).toBeCloseTo(cents(2, 600), 12);
    expect(cost.parts.cache_read_input).toBeCloseTo(cents(0.5, 300), 12);
    expect(cost.parts.cache_write_input).toBeCloseTo(cents(2.5, 100), 12);
    expect(cost.parts.output).toBeCloseTo(cents(8, 300), 12);
    expect(cost.parts.reasoning).toBeCloseTo(cents(10, 200), 12);
    expect(cost.total).toBeCloseTo(cents(2, 600) + cents(0.5, 300) + cents(2.5, 100) + cents(8, 300) + cents(10, 200), 12);
  });

  test('a kind without its own price takes its fallback (cached input → input, reasoning → output)', () => {
    const cost = pricing.costOf({ provider: 'acme', model: 'chat-1-mini', usage: usage({ promptTokens: 100, completionTokens: 50, cachedInputTokens: 40, reasoningTokens: 10 }) })!;
    expect(cost.parts.cache_read_input).toBeCloseTo(cents(0.4, 40), 12);
    expect(cost.parts.reasoning).toBeCloseTo(cents(1.6, 10), 12);
  });

  test('1-hour cache writes at their own price, else at the 5-minute write price, else at the input price', () => {
    const u = usage({ promptTokens: 1000, completionTokens: 0, cacheWriteInputTokens: 500, cacheWrite1hInputTokens: 200 });
    const own = createPricing(new Map([['acme', new PriceList({ ...catalogue, models: { m: { input: 3, cache_write_input: 3.75, cache_write_input_1h: 6, output: 15 } } })]]), undefined);
    const c = own.costOf({ provider: 'acme', model: 'm', usage: u })!;
    expect(Object.keys(c.parts).sort()).toEqual(['cache_write_input', 'cache_write_input_1h', 'input']);
    expect(c.parts.input).toBeCloseTo(cents(3, 500), 12);
    expect(c.parts.cache_write_input).toBeCloseTo(cents(3.75, 300), 12);
    expect(c.parts.cache_write_input_1h).toBeCloseTo(cents(6, 200), 12);
    // chat-1 has a 5-minute write price (2.5) and no 1-hour one; chat-1-mini neither (input, 0.4).
    expect(pricing.costOf({ provider: 'acme', model: 'chat-1', usage: u })!.parts.cache_write_input_1h).toBeCloseTo(cents(2.5, 200), 12);
    expect(pricing.costOf({ provider: 'acme', model: 'chat-1-mini', usage: u })!.parts.cache_write_input_1h).toBeCloseTo(cents(0.4, 200), 12);
  });

  test('embeddings and the per-request price', () => {
    expect(pricing.costOf({ provider: 'acme', model: 'embed-1', endpoint: 'embed', usage: usage({ promptTokens: 5000 }) })!.total).toBeCloseTo(cents(0.02, 5000), 12);
    const search = pricing.costOf({ provider: 'acme', model: 'search-1', usage: usage({ promptTokens: 10, completionTokens: 10 }) })!;
    expect(search.parts.per_request).toBeCloseTo(0.5, 12);
    expect(search.total).toBeCloseTo(0.5 + cents(1, 20), 12);
  });

  test('unknown: a model not in the catalogue, a provider without one, or a kind used with no price at all → null, not 0', () => {
    expect(pricing.costOf({ provider: 'acme', model: 'chat-9', usage: usage({ promptTokens: 10, completionTokens: 1 }) })).toBeNull();
    expect(pricing.costOf({ provider: 'other', model: 'chat-1', usage: usage({ promptTokens: 10, completionTokens: 1 }) })).toBeNull();
    // embed-1 has no input and no output price: a chat answer from it cannot be priced
    expect(pricing.costOf({ provider: 'acme', model: 'embed-1', usage: usage({ promptTokens: 10, completionTokens: 1 }) })).toBeNull();
    expect(pricing.pricesOf('acme', 'chat-9')).toBeUndefined();
  });

  test("an integration's own model prices replace the catalogue's; its multipliers apply per kind on top", () => {
    const integrations: IntegrationPrices = {
      of: (id, model) =>
        id !== 'int-1'
          ? undefined
          : model === 'chat-9'
            ? { prices: { input: 1, output: 2 }, multiplier: { output: 1.5 } }
            : { multiplier: { input: 2, cache_read_input: 3, reasoning: 0.5 } },
    };
    const withOverrides = createPricing(lists, integrations);
    const own = withOverrides.costOf({ provider: 'acme', model: 'chat-9', integrationId: 'int-1', usage: usage({ promptTokens: 100, completionTokens: 100 }) })!;
    expect(own.priced).toBe('integration');
    expect(own.parts.input).toBeCloseTo(cents(1, 100), 12);
    expect(own.parts.output).toBeCloseTo(cents(2, 100) * 1.5, 12);
    expect(withOverrides.pricesOf('acme', 'chat-9', 'int-1')).toEqual({ input: 1, output: 2 });

    const scaled = withOverrides.costOf({
      provider: 'acme',
      model: 'chat-1',
      integrationId: 'int-1',
      usage: usage({ promptTokens: 100, completionTokens: 100, cachedInputTokens: 50, reasoningTokens: 40 }),
    })!;
    expect(scaled.priced).toBe('catalogue');
    expect(scaled.parts.input).toBeCloseTo(cents(2, 50) * 2, 12);
    expect(scaled.parts.cache_read_input).toBeCloseTo(cents(0.5, 50) * 3, 12);
    expect(scaled.parts.reasoning).toBeCloseTo(cents(10, 40) * 0.5, 12);
    expect(scaled.parts.output).toBeCloseTo(cents(8, 60), 12);
    // Another integration, or none: the catalogue's prices as they are.
    const plain = withOverrides.costOf({ provider: 'acme', model: 'chat-1', integrationId: 'int-2', usage: usage({ promptTokens: 100, completionTokens: 0 }) })!;
    expect(plain.total).toBeCloseTo(cents(2, 100), 12);
  });

  test('costOf on its own: the sum of its parts', () => {
    const c = costOf({ input: 10, output: 10 }, { input: 1, output: 3 }, undefined, { priced: 'catalogue', model: 'm' })!;
    expect(c.total).toBeCloseTo(cents(1, 10) + cents(3, 10), 12);
  });
});
