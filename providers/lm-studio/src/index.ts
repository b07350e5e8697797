import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** LM Studio (local server; no key). */
export const provider = openAICompatible({
  id: 'lm-studio',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'http://localhost:1234/v1',
  auth: { kind: 'none' },
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
