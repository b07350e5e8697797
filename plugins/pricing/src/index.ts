/**
 * Pricing (README, "Cost"): reads every loaded provider's catalogue once at start-up (a bad one stops the start),
 * provides the `pricing` service, and attaches each finished call's cost to it once (COST_FIGURE), in a finally
 * stage that runs before the request log and any other reader of the figure.
 */
import { COST_FIGURE, definePlugin, type GatewayRequest, type Outcome, type Pricing, Services } from '@gateway/sdk';
import { loadCatalogue } from './load.ts';
import { PriceList } from './match.ts';
import { createPricing } from './pricing.ts';

export { matchModel, PriceList } from './match.ts';
export { loadCatalogue } from './load.ts';
export { splitUsage } from './cost.ts';

/** The integration behind the attempt that answered, when a `@slug` provider was used. */
function integrationOf(outcome: Outcome): string | undefined {
  for (let i = outcome.attempts.length - 1; i >= 0; i--) {
    const attempt = outcome.attempts[i]!;
    if (attempt.index === outcome.targetIndex) return attempt.integrationId;
  }
  return undefined;
}

/** The cost of a finished call, or undefined when there is nothing to price (no usage, no provider, no model). */
export function costOfCall(pricing: Pricing, req: GatewayRequest, outcome: Outcome) {
  const usage = outcome.usage;
  const model = req.body?.model ?? modelOf(outcome);
  if (!usage || !outcome.providerId || typeof model !== 'string') return undefined;
  return pricing.costOf({
    provider: outcome.providerId,
    model,
    integrationId: integrationOf(outcome),
    workspaceId: req.caller.workspaceId || undefined,
    endpoint: req.endpoint,
    usage,
  });
}

/** A passthrough call names no model in the request: the answer's top-level `"model"`. */
function modelOf(outcome: Outcome): string | undefined {
  const body = outcome.responseBody;
  if (!body) return undefined;
  const match = /"model"\s*:\s*"([^"\\]{1,255})"/.exec(body.slice(0, 4096));
  return match?.[1];
}

export default definePlugin({
  setup(api) {
    let pricing: Pricing | undefined;
    const unready = (): never => {
      throw new Error('pricing is asked before the gateway is ready');
    };
    api.provide(Services.pricing, {
      costOf: (input) => (pricing ?? unready()).costOf(input),
      pricesOf: (provider, model, integrationId) => (pricing ?? unready()).pricesOf(provider, model, integrationId),
    });
    api.onReady(() => {
      const lists = new Map<string, PriceList>();
      const unpriced: string[] = [];
      for (const [id, adapter] of api.service(Services.providerAdapters)) {
        if (adapter.pricing) lists.set(id, new PriceList(loadCatalogue(id, adapter.pricing)));
        else unpriced.push(id);
      }
      if (unpriced.length) api.logger.info({ providers: unpriced }, 'pricing: providers without a price catalogue (their calls cost null)');
      pricing = createPricing(lists, api.optional(Services.integrationPrices));
    });
    api.stage({
      name: 'pricing',
      phase: 'finally',
      rule: 'fire-and-forget',
      before: ['request-log'],
      run: (req, outcome) => {
        if (!pricing) return;
        const cost = costOfCall(pricing, req, outcome);
        if (cost !== undefined) outcome.figures.set(COST_FIGURE, cost);
      },
    });
  },
});
