import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Novita AI. */
export const provider = openAICompatible({
  id: 'novita-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.novita.ai/v3/openai',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
