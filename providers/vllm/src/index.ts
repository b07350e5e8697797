import { openAICompatible } from '@gateway/provider-openai-compatible';
import { definePlugin } from '@gateway/sdk';

/** vLLM's OpenAI-compatible server, usually reached through a custom host. */
export const provider = openAICompatible({
  id: 'vllm',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'http://localhost:8000/v1',
  unsupported: ['moderate'],
  // vLLM's chat template continues the last assistant message instead of opening a new one.
  prefill: { body: { continue_final_message: true, add_generation_prompt: false } },
});

export default definePlugin({ setup: (api) => api.provider(provider) });
