import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Novita AI. */
export const provider = openAICompatible({
  id: 'novita-ai',
  baseUrl: 'https://api.novita.ai/v3/openai',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
