import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Mistral AI (OpenAI-compatible chat and embeddings). */
export const provider = openAICompatible({
  id: 'mistral-ai',
  baseUrl: 'https://api.mistral.ai/v1',
  unsupported: ['complete', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
