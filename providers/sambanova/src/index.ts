import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** SambaNova Cloud. */
export const provider = openAICompatible({
  id: 'sambanova',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.sambanova.ai/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
