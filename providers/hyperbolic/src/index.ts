import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Hyperbolic. */
export const provider = openAICompatible({
  id: 'hyperbolic',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.hyperbolic.xyz/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
