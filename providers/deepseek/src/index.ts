import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** DeepSeek. */
export const provider = openAICompatible({
  id: 'deepseek',
  baseUrl: 'https://api.deepseek.com/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
