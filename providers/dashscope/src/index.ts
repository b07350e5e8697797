import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Alibaba Cloud Model Studio (DashScope, international). */
export const provider = openAICompatible({
  id: 'dashscope',
  pricing: new URL('../pricing.json', import.meta.url),
  // Model Studio documents `stream_options.include_usage` for its OpenAI-compatible mode: streams are asked for usage, so each one's tokens and cost are known.
  streamOptions: true,
  baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
  unsupported: ['moderate'],
});

export default definePlugin({ setup: (api) => api.provider(provider) });
