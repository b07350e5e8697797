import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Perplexity. */
export const provider = openAICompatible({
  id: 'perplexity-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.perplexity.ai',
  unsupported: ['complete', 'embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
