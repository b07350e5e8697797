import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** vLLM's OpenAI-compatible server, usually reached through a custom host. */
export const provider = openAICompatible({
  id: 'vllm',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'http://localhost:8000/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
