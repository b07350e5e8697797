import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** xAI (Grok). */
export const provider = openAICompatible({
  id: 'x-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.x.ai/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
