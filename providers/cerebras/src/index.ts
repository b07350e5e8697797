import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Cerebras. */
export const provider = openAICompatible({
  id: 'cerebras',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.cerebras.ai/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
