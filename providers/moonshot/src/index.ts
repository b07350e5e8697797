import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Moonshot AI (Kimi). */
export const provider = openAICompatible({
  id: 'moonshot',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.moonshot.ai/v1',
  unsupported: ['complete', 'embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
