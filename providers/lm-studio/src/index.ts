import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** LM Studio (local server; no key). */
export const provider = openAICompatible({
  id: 'lm-studio',
  baseUrl: 'http://localhost:1234/v1',
  auth: { kind: 'none' },
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
