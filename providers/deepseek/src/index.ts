import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** DeepSeek. */
export const provider = openAICompatible({
  id: 'deepseek',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.deepseek.com/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
