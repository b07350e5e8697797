import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Nebius AI Studio. */
export const provider = openAICompatible({
  id: 'nebius',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.studio.nebius.com/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
