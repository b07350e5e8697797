/**
 * Google's Gemini API (`https://generativelanguage.googleapis.com`, API version v1beta): chat (`:generateContent`,
 * `:streamGenerateContent?alt=sse`), embeddings (`:batchEmbedContents`) and the model list, translated from and to
 * OpenAI's shape. The key (config `api_key` or `Authorization: Bearer …`) goes in `x-goog-api-key`.
 *
 * The translation functions are pure and exported: vertex-ai sends the same Gemini bodies.
 */
import { targetKey } from '@gateway/provider-openai-compatible';
import { definePlugin, Errors, type EndpointTranslator, type ProviderAdapter, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { geminiBatches } from './batches.ts';
import { fromGeminiEmbedResponse, fromGeminiModelList, toGeminiEmbedRequest } from './embed.ts';
import { toGeminiRequest } from './request.ts';
import { fromGeminiResponse, geminiError } from './response.ts';
import { geminiStreamTranslator } from './stream.ts';

export { fromBatchOperation, fromInlinedResponse, geminiBatches } from './batches.ts';
export { embeddingInputs, embeddingList, fromGeminiEmbedResponse, fromGeminiModelList, geminiModelName, toGeminiEmbedRequest } from './embed.ts';
export { requestFacts, type RequestFacts } from './facts.ts';
export { contentText, guessMimeType, SKIP_THOUGHT_SIGNATURE, toGeminiRequest, type GeminiRequestOptions } from './request.ts';
export { finishReason, fromGeminiResponse, geminiError, geminiLogprobs, geminiUsage, streamError, toolCall, toolCallId } from './response.ts';
export { toGeminiParameters, toGeminiSchema } from './schema.ts';
export { geminiStreamChunks, geminiStreamTranslator, type GeminiStreamOptions } from './stream.ts';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';
export const GEMINI_API_VERSION = 'v1beta';

/**
 * A model name checked to be safe in a URL path: letters, digits and `._-@/` only, no empty or dot segment.
 * Anything else could reach another path or method of the API.
 */
export function safeModel(model: unknown, param = 'model'): string {
  if (typeof model !== 'string' || model === '') throw Errors.badRequest('model is required', param);
  if (!/^[A-Za-z0-9._@/-]+$/.test(model) || model.split('/').some((seg) => seg === '' || seg === '.' || seg === '..'))
    throw Errors.badRequest(`model ${JSON.stringify(model.slice(0, 200))} is not a valid model name`, param);
  return model;
}

/** `models/<m>` (or a `tunedModels/…` name as given) for the URL. */
function modelResource(model: unknown): string {
  const m = safeModel(model);
  return m.includes('/') ? m : `models/${m}`;
}

const chatComplete: EndpointTranslator = {
  path: (_target, body) =>
    `/${GEMINI_API_VERSION}/${modelResource(body.model)}:${body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  request: (body, _target, ctx) => toGeminiRequest(body, { includeThoughts: !ctx.strictWireCompliance }),
  response: (json, ctx) => fromGeminiResponse(json, ctx),
  stream: geminiStreamTranslator('google'),
};

const embed: EndpointTranslator = {
  path: (_target, body) => `/${GEMINI_API_VERSION}/${modelResource(body.model)}:batchEmbedContents`,
  request: (body) => toGeminiEmbedRequest(body, safeModel(body.model)),
  response: (json, ctx) => fromGeminiEmbedResponse(json, ctx),
};

const listModels: EndpointTranslator = {
  path: () => `/${GEMINI_API_VERSION}/models?pageSize=1000`,
  response: (json) => fromGeminiModelList(json),
};

export const google: ProviderAdapter = {
  id: 'google',
  baseUrl: () => GEMINI_BASE_URL,
  authorize(call: ProviderCall, target: TargetConfig): ProviderCall {
    const key = targetKey(target);
    if (!key) return call;
    return { ...call, headers: { ...call.headers, 'x-goog-api-key': key } };
  },
  endpoints: { chatComplete, embed, listModels },
  // OpenAI's /v1/batches of chat lines run in the Gemini API's batch mode (batches.ts).
  batches: geminiBatches,
  error: (json) => geminiError(json),
  pricing: new URL('../pricing.json', import.meta.url),
};

export default definePlugin({ setup: (api) => api.provider(google) });
