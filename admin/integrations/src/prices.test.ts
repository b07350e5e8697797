// An integration's pricing as the pricing plugin reads it: the stored pricing_adjustments multipliers by token kind,
// and a model's own prices from the in-memory set.
import { describe, expect, test } from 'bun:test';
import { multipliersOf } from './credentials.ts';
import { createIntegrationPrices } from './prices.ts';
import type { IntegrationEntry, ModelEntry, StoredSet } from './stored-set.ts';

describe('multipliersOf', () => {
  test('each stored multiplier scales its token kinds (request_token: input and embedding)', () => {
    expect(multipliersOf({ multiplier: { request_token: 2, response_token: 1.5, cache_read_input_token: 0.5, reasoning_token: 3, response_audio_token: 4 } })).toEqual({
      input: 2,
      embedding: 2,
      output: 1.5,
      cache_read_input: 0.5,
      reasoning: 3,
      audio_output: 4,
    });
  });

  test('cache_write_input_token scales cache writes of both lifetimes (5-minute and 1-hour)', () => {
    expect(multipliersOf({ multiplier: { cache_write_input_token: 2 } })).toEqual({ cache_write_input: 2, cache_write_input_1h: 2 });
  });

  test('none stored, or only kinds no answer reports apart: no multipliers', () => {
    expect(multipliersOf(null)).toBeUndefined();
    expect(multipliersOf({ multiplier: {} })).toBeUndefined();
    expect(multipliersOf({ multiplier: { response_image_token: 2 } })).toBeUndefined();
  });
});

describe('createIntegrationPrices', () => {
  const model = (slug: string, prices: ModelEntry['prices']): ModelEntry => ({ slug, enabled: true, customHost: undefined, target: undefined, prices, createdAt: 0 });
  const entry = (id: string, models: ModelEntry[], multiplier: IntegrationEntry['multiplier']) =>
    ({ id, models: new Map(models.map((m) => [m.slug, m])), multiplier }) as unknown as IntegrationEntry;
  const set = {
    integrations: new Map([
      ['int-1', entry('int-1', [model('own', { input: 1, output: 2 }), model('plain', undefined)], { output: 2 })],
      ['int-2', entry('int-2', [model('plain', undefined)], undefined)],
    ]),
  } as unknown as StoredSet;
  const prices = createIntegrationPrices(() => set);

  test("a model's own prices and the integration's multipliers; nothing when it says nothing", () => {
    expect(prices.of('int-1', 'own')).toEqual({ prices: { input: 1, output: 2 }, multiplier: { output: 2 } });
    expect(prices.of('int-1', 'plain')).toEqual({ prices: undefined, multiplier: { output: 2 } });
    expect(prices.of('int-2', 'plain')).toBeUndefined();
    expect(prices.of('int-3', 'own')).toBeUndefined();
  });
});
