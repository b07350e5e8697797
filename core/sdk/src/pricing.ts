/**
 * Prices and cost (issue #17, item 1). A provider brings a catalogue of its models' public list prices (a data file in
 * its package, `ProviderAdapter.pricing`); an integration's models may carry their own prices and its
 * `pricing_adjustments.multiplier` scales each token kind. The `pricing` service turns one answer's usage into a cost.
 *
 * Units: catalogue prices are US dollars per 1M tokens (`per_request`: US dollars per request); a cost is in US
 * cents, fractional (a token costs a fraction of a cent). README, "Cost".
 */

import { Type } from '@sinclair/typebox';
import type { EndpointKind } from './types.ts';
import type { TokenUsage } from './usage.ts';
import { defineFigure } from './usage.ts';

/**
 * The kinds of tokens a provider bills, disjoint: a token counts in one kind only. `input` is the prompt tokens that
 * are of no other input kind (not read from or written to the cache, not audio, not image); `output` the completion
 * tokens of no other output kind (not reasoning, audio or prediction). `embedding`: an embeddings request's
 * input tokens. `cache_write_input` is a cache write with the default (5-minute) lifetime, `cache_write_input_1h`
 * one with Anthropic's 1-hour lifetime, billed higher. A `TokenUsage` (OpenAI's totals with their details) splits
 * into these (README, "Cost").
 */
export const TOKEN_KINDS = [
  'input',
  'cache_read_input',
  'cache_write_input',
  'cache_write_input_1h',
  'audio_input',
  'image_input',
  'embedding',
  'output',
  'reasoning',
  'audio_output',
  'prediction_accepted',
  'prediction_rejected',
] as const;

export type TokenKind = (typeof TOKEN_KINDS)[number];

/** One answer's tokens by kind (an absent kind: none). */
export type TokensByKind = Partial<Readonly<Record<TokenKind, number>>>;

/**
 * Where a kind without its own price takes it from (README, "Cost"): cached and audio/image input from their plain
 * kind (a 1-hour cache write from the 5-minute one, then from input), reasoning and predictions from `output`.
 * `input` and `output` have none: a model without the price of a kind it used is billed as unknown (null).
 */
export const PRICE_FALLBACK: Readonly<Partial<Record<TokenKind, TokenKind>>> = {
  cache_read_input: 'input',
  cache_write_input: 'input',
  cache_write_input_1h: 'cache_write_input',
  audio_input: 'input',
  image_input: 'input',
  embedding: 'input',
  reasoning: 'output',
  audio_output: 'output',
  prediction_accepted: 'output',
  prediction_rejected: 'output',
};

/** A model's prices: US dollars per 1M tokens of each kind; `per_request` in US dollars per request. */
export type ModelPrices = Partial<Readonly<Record<TokenKind | 'per_request', number>>>;

const Price = Type.Number({ minimum: 0, maximum: 1_000_000 });

/** `ModelPrices` checked (a catalogue's models, an integration model's `pricing`): known kinds only, at least one. */
export const ModelPricesSchema = Type.Object(
  Object.fromEntries([...TOKEN_KINDS, 'per_request'].map((kind) => [kind, Type.Optional(Price)])),
  { additionalProperties: false, minProperties: 1 },
);

/**
 * A provider's catalogue, as its data file holds it (`providers/<name>/pricing.json`; validated at start-up, a bad
 * file stops the gateway naming it). Prices are facts: `source` names the public page they were read from, `as_of`
 * the day they were read.
 */
export interface PricingCatalogue {
  /** The public pricing page (URL). */
  readonly source: string;
  /** The day the prices were read (YYYY-MM-DD). */
  readonly as_of: string;
  readonly currency: 'USD';
  readonly unit: 'USD per 1M tokens';
  /** Anything a reader should know (models left out, how a price was read). */
  readonly note?: string;
  /** By model id, as the provider names it in requests. */
  readonly models: Readonly<Record<string, ModelPrices>>;
  /** Other names of a model (`claude-3-5-sonnet-latest` → `claude-3-5-sonnet-20241022`). */
  readonly aliases?: Readonly<Record<string, string>>;
}

/** `PricingCatalogue` checked: a provider's data file must match it or the gateway does not start. */
export const PricingCatalogueSchema = Type.Object(
  {
    source: Type.String({ pattern: '^https://', maxLength: 2048 }),
    as_of: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
    currency: Type.Literal('USD'),
    unit: Type.Literal('USD per 1M tokens'),
    note: Type.Optional(Type.String({ maxLength: 4096 })),
    models: Type.Record(Type.String(), ModelPricesSchema),
    aliases: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 255 }))),
  },
  { additionalProperties: false },
);

/** Multipliers per token kind (an integration's `pricing_adjustments.multiplier`); an absent kind: 1. */
export type PriceMultipliers = Partial<Readonly<Record<TokenKind, number>>>;

/** What an integration says about a model's price: its own prices (instead of the catalogue's) and multipliers. */
export interface IntegrationModelPricing {
  readonly prices?: ModelPrices;
  readonly multiplier?: PriceMultipliers;
}

/** An integration's pricing for a model, answered from memory (provided by the integrations' administration). */
export interface IntegrationPrices {
  of(integrationId: string, model: string): IntegrationModelPricing | undefined;
}

/** What a cost is computed from: where the answer came from and its usage. */
export interface CostInput {
  /** The provider adapter's id (`openai`), not a `@slug`. */
  readonly provider: string;
  /** The model as the request named it (or the answer, for a passthrough call). */
  readonly model: string;
  /** The integration behind a `@slug` provider, when the call went through one: its prices and multipliers apply. */
  readonly integrationId?: string;
  readonly workspaceId?: string;
  /** `embed`: the prompt tokens are embedding tokens. */
  readonly endpoint?: EndpointKind;
  readonly usage: TokenUsage;
}

/** One answer's cost in US cents (fractional), in total and by kind. */
export interface CostBreakdown {
  /** US cents, the sum of `parts`. */
  readonly total: number;
  /** US cents by token kind (kinds the answer used) and `per_request`. */
  readonly parts: Partial<Readonly<Record<TokenKind | 'per_request', number>>>;
  /** Whose prices: the provider's catalogue, or the integration's own for the model. */
  readonly priced: 'catalogue' | 'integration';
  /** The priced model id (the catalogue's, after aliases and dated ids). */
  readonly model: string;
}

/** The `pricing` service (Services.pricing): synchronous, no I/O; call it off the request's path. */
export interface Pricing {
  /** The cost of one answer, or null when the model has no price (unknown model, or a kind used without a price). */
  costOf(input: CostInput): CostBreakdown | null;
  /** The prices that apply to a model (the integration's own, else the catalogue's), or undefined when unknown. */
  pricesOf(provider: string, model: string, integrationId?: string): ModelPrices | undefined;
}

/**
 * The cost of a finished call, attached once by the pricing plugin to `Outcome.figures` (a finally stage running
 * before the request log): a breakdown, null when the model has no price, absent when the answer carried no usage
 * or no pricing is loaded.
 */
export const COST_FIGURE = defineFigure<CostBreakdown | null>('cost');
