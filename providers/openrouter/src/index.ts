import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** OpenRouter. */
export const provider = openAICompatible({
  id: 'openrouter',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://openrouter.ai/api/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
