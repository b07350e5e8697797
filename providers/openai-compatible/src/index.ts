import type { EndpointTranslator, PricingCatalogue, ProviderAdapter, ProviderCall, TargetConfig } from '@gateway/sdk';
import { applyKeyAuth, type KeyAuth, targetKey } from './auth.ts';

export { applyKeyAuth, targetKey, type KeyAuth };

/** A vendor whose API is OpenAI's: where it lives, how it authenticates, and what it lacks. */
export interface OpenAICompatibleVendor {
  id: string;
  /** The vendor's `…/v1`-style base URL; a custom host replaces it. */
  baseUrl: string | ((target: TargetConfig) => string);
  /** Default bearer. */
  auth?: KeyAuth;
  /** Endpoints the vendor does not offer (default: it offers all four). */
  unsupported?: ('chatComplete' | 'complete' | 'embed' | 'moderate')[];
  /** Extra headers every call carries (vendor scoping such as an organisation). */
  headers?(target: TargetConfig): Record<string, string>;
  /** The vendor's list prices: its package's pricing.json (`new URL('../pricing.json', import.meta.url)`). */
  pricing?: URL | PricingCatalogue;
}

const path = (p: string): EndpointTranslator => ({ path: () => p });

/** OpenAI's own paths; no request or response translation, so answers pass through byte for byte. */
const OPENAI_ENDPOINTS = {
  chatComplete: path('/chat/completions'),
  complete: path('/completions'),
  embed: path('/embeddings'),
  moderate: path('/moderations'),
} as const;

export function openAICompatible(vendor: OpenAICompatibleVendor): ProviderAdapter {
  const auth = vendor.auth ?? { kind: 'bearer' };
  const endpoints: ProviderAdapter['endpoints'] = { ...OPENAI_ENDPOINTS };
  for (const missing of vendor.unsupported ?? []) delete endpoints[missing];
  const base = vendor.baseUrl;
  return {
    id: vendor.id,
    baseUrl: typeof base === 'string' ? () => base : base,
    authorize(call: ProviderCall, target: TargetConfig): ProviderCall {
      const withKey = applyKeyAuth(call, auth, targetKey(target));
      const extra = vendor.headers?.(target);
      return extra && Object.keys(extra).length ? { ...withKey, headers: { ...withKey.headers, ...extra } } : withKey;
    },
    endpoints,
    ...(vendor.pricing ? { pricing: vendor.pricing } : {}),
  };
}
