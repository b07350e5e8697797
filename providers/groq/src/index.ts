import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** Groq. */
export const provider = openAICompatible({
  id: 'groq',
  pricing: new URL('../pricing.json', import.meta.url),
  // Groq's API reference documents `stream_options.include_usage`: streams are asked for usage, so each one's tokens and cost are known.
  streamOptions: true,
  baseUrl: 'https://api.groq.com/openai/v1',
  unsupported: ['complete', 'moderate'],
  // Groq documents OpenAI's Responses API at /openai/v1/responses: forwarded as it is (docs/responses.md).
  responses: true,
});

export default definePlugin({ setup: (api) => api.provider(provider) });
