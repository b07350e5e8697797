import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** DeepInfra. */
export const provider = openAICompatible({
  id: 'deepinfra',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.deepinfra.com/v1/openai',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
