/**
 * Cohere (https://api.cohere.com; a custom host replaces it): chat through the Chat API v2, embeddings through the
 * Embed API v2, the model list through `GET /v1/models`. Bearer key authorization. Text completions and
 * moderations have no Cohere counterpart and answer "unsupported endpoint".
 */
import { applyKeyAuth, targetKey } from '@gateway/provider-openai-compatible';
import { definePlugin, type ProviderAdapter, type ProviderErrorInfo } from '@gateway/sdk';
import { chatRequest, chatResponse } from './chat.ts';
import { embedRequest, embedResponse } from './embed.ts';
import { isObject } from './json.ts';
import { MODELS_PATH, modelsResponse } from './models.ts';
import { toChunks } from './stream.ts';

export const COHERE_BASE_URL = 'https://api.cohere.com';

/** Cohere's error body: `{"message": "…"}` (sometimes with an `id`). */
export function cohereError(json: unknown): ProviderErrorInfo | undefined {
  if (!isObject(json)) return undefined;
  if (typeof json.message === 'string') return { message: json.message };
  return undefined;
}

export const cohere: ProviderAdapter = {
  id: 'cohere',
  baseUrl: () => COHERE_BASE_URL,
  authorize: (call, target) => applyKeyAuth(call, { kind: 'bearer' }, targetKey(target)),
  endpoints: {
    chatComplete: {
      path: () => '/v2/chat',
      request: chatRequest,
      response: chatResponse,
      stream: { framing: 'sse', toChunks },
    },
    embed: { path: () => '/v2/embed', request: embedRequest, response: embedResponse },
    listModels: { path: () => MODELS_PATH, response: modelsResponse },
  },
  error: cohereError,
  pricing: new URL('../pricing.json', import.meta.url),
};

export default definePlugin({ setup: (api) => api.provider(cohere) });
