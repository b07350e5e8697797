/**
 * Service `integrationPrices`: what an integration says about a model's price, answered from the in-memory set (no
 * I/O): the model's own prices (integration models' `pricing`) and the integration's `pricing_adjustments`
 * multipliers. The pricing plugin applies them (README, "Cost").
 */
import type { IntegrationModelPricing, IntegrationPrices } from '@gateway/sdk';
import type { StoredSet } from './stored-set.ts';

export function createIntegrationPrices(current: () => StoredSet): IntegrationPrices {
  return {
    of(integrationId: string, model: string): IntegrationModelPricing | undefined {
      const integration = current().integrations.get(integrationId);
      if (!integration) return undefined;
      const prices = integration.models.get(model)?.prices;
      if (!prices && !integration.multiplier) return undefined;
      return { prices, multiplier: integration.multiplier };
    },
  };
}
