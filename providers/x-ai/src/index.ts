import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** xAI (Grok). */
export const provider = openAICompatible({
  id: 'x-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.x.ai/v1',
  // xAI documents OpenAI's Responses API at /v1/responses: forwarded as it is (docs/responses.md).
  responses: true,
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
