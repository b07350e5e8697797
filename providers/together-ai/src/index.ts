import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Together AI. */
export const provider = openAICompatible({
  id: 'together-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.together.xyz/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
