import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** SiliconFlow. */
export const provider = openAICompatible({
  id: 'siliconflow',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.siliconflow.cn/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
