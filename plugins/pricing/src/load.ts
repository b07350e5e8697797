/**
 * Reads a provider's catalogue once at start-up: its data file (or the catalogue an adapter holds), checked against
 * the SDK's schema. A bad catalogue stops the gateway with a message naming the file and each fault.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type PricingCatalogue, PricingCatalogueSchema } from '@gateway/sdk';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const check = TypeCompiler.Compile(PricingCatalogueSchema);

/** The catalogue of `provider`, or an Error naming `where` (the file, else the provider). */
export function loadCatalogue(provider: string, pricing: URL | PricingCatalogue): PricingCatalogue {
  const where = pricing instanceof URL ? fileURLToPath(pricing) : `the pricing catalogue of provider ${provider}`;
  let value: unknown = pricing;
  if (pricing instanceof URL) {
    try {
      value = JSON.parse(readFileSync(pricing, 'utf8'));
    } catch (error) {
      throw new Error(`Pricing: cannot read ${where} (provider ${provider}): ${(error as Error).message}`);
    }
  }
  if (!check.Check(value)) {
    const faults = [...check.Errors(value)].slice(0, 10).map((e) => `${e.path || '/'}: ${e.message}`);
    throw new Error(`Pricing: ${where} (provider ${provider}) is not a valid catalogue: ${faults.join('; ')}`);
  }
  const catalogue = value as PricingCatalogue;
  for (const [alias, target] of Object.entries(catalogue.aliases ?? {}))
    if (!(target in catalogue.models))
      throw new Error(`Pricing: ${where} (provider ${provider}): alias ${alias} names ${target}, which has no prices`);
  return catalogue;
}
