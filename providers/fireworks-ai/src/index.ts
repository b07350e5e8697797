import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Fireworks AI. */
export const provider = openAICompatible({
  id: 'fireworks-ai',
  baseUrl: 'https://api.fireworks.ai/inference/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
