import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Ollama (local; its OpenAI-compatible API needs no key). */
export const provider = openAICompatible({
  id: 'ollama',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'http://localhost:11434/v1',
  auth: { kind: 'none' },
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
