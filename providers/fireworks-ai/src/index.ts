import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Fireworks AI. */
export const provider = openAICompatible({
  id: 'fireworks-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.fireworks.ai/inference/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
