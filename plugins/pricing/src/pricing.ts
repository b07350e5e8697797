/** The `pricing` service: the providers' price lists, an integration's own prices and multipliers, one answer's cost. */
import type { CostBreakdown, CostInput, IntegrationPrices, ModelPrices, Pricing } from '@gateway/sdk';
import { costOf, splitUsage } from './cost.ts';
import type { PriceList } from './match.ts';

export function createPricing(lists: ReadonlyMap<string, PriceList>, integrations: IntegrationPrices | undefined): Pricing {
  const ownOf = (integrationId: string | undefined, model: string) =>
    integrationId === undefined ? undefined : integrations?.of(integrationId, model);
  return {
    costOf(input: CostInput): CostBreakdown | null {
      const tokens = splitUsage(input.usage, input.endpoint);
      if (!tokens) return null;
      const own = ownOf(input.integrationId, input.model);
      if (own?.prices) return costOf(tokens, own.prices, own.multiplier, { priced: 'integration', model: input.model });
      const found = lists.get(input.provider)?.lookup(input.model);
      if (!found) return null;
      return costOf(tokens, found.prices, own?.multiplier, { priced: 'catalogue', model: found.id });
    },
    pricesOf(provider: string, model: string, integrationId?: string): ModelPrices | undefined {
      return ownOf(integrationId, model)?.prices ?? lists.get(provider)?.lookup(model)?.prices;
    },
  };
}
