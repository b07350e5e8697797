import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Lambda Inference. */
export const provider = openAICompatible({
  id: 'lambda',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.lambda.ai/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
