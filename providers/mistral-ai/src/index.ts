/**
 * Mistral AI (https://api.mistral.ai/v1): OpenAI's chat completions, embeddings and model list, over the shared
 * openai-compatible adapter, with the few documented differences translated (chat.ts, embed.ts, errors.ts).
 * Streams and the model list pass through unchanged; text completions (Mistral's FIM has another shape) and
 * moderations (another shape too) are not offered. Fine-tuning jobs are translated to Mistral's (fine-tuning.ts).
 */
import { openAICompatible } from '@gateway/provider-openai-compatible';
import { assistantPrefill, definePlugin, type EndpointTranslator, type ProviderAdapter } from '@gateway/sdk';
import { mistralChatRequest, mistralChatResponse } from './chat.ts';
import { mistralEmbedRequest } from './embed.ts';
import { mistralError } from './errors.ts';
import { mistralFineTuning } from './fine-tuning.ts';

export { DROPPED_FIELDS, mistralChatRequest, mistralChatResponse, mistralToolCallId } from './chat.ts';
export { mistralEmbedRequest } from './embed.ts';
export { mistralError } from './errors.ts';
export { fromMistralJob, mistralFineTuning, mistralHyperparameters, mistralJobBody } from './fine-tuning.ts';

const base = openAICompatible({
  id: 'mistral-ai',
  pricing: new URL('../pricing.json', import.meta.url),
  baseUrl: 'https://api.mistral.ai/v1',
  unsupported: ['complete', 'moderate'],
});

const chat = base.endpoints.chatComplete as EndpointTranslator;
const embed = base.endpoints.embed as EndpointTranslator;

export const provider: ProviderAdapter = {
  ...base,
  endpoints: {
    ...base.endpoints,
    chatComplete: {
      ...chat,
      request: mistralChatRequest,
      response: mistralChatResponse,
      // Mistral continues an assistant message marked `prefix: true`, the last of the conversation.
      prefill: (body, text) => assistantPrefill(body, text, { message: { prefix: true } }),
    },
    embed: { ...embed, request: mistralEmbedRequest },
  },
  error: mistralError,
  // OpenAI's fine-tuning jobs over Mistral's own fine-tuning API (fine-tuning.ts).
  fineTuning: mistralFineTuning,
};

export default definePlugin({ setup: (api) => api.provider(provider) });
