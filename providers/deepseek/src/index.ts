import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** DeepSeek. */
export const provider = openAICompatible({
  id: 'deepseek',
  pricing: new URL('../pricing.json', import.meta.url),
  // DeepSeek's API reference documents `stream_options.include_usage`: streams are asked for usage, so each one's tokens and cost are known.
  streamOptions: true,
  baseUrl: 'https://api.deepseek.com/v1',
  unsupported: ['embed', 'moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
