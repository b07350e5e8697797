/**
 * Google Cloud Vertex AI (`https://<region>-aiplatform.googleapis.com`, `https://aiplatform.googleapis.com` for the
 * `global` region; a custom host replaces it and the same paths follow).
 *
 * - Gemini models (`google` publisher): `:generateContent` / `:streamGenerateContent?alt=sse` with the google
 *   provider's translation; embeddings by `:predict`.
 * - Anthropic models (`anthropic.<model>[@<version>]` or a full `publishers/anthropic` resource): `:rawPredict` /
 *   `:streamRawPredict` with the anthropic provider's body (`anthropic_version: vertex-2023-10-16`, no `model`).
 * - `model` may be a complete resource identifier (see models.ts); the project is `svcC_project_id` (or the service
 *   account's), the region `svcC_region` (default us-central1).
 * - Authorization: an OAuth access token from `svcC_service_account_json` (auth.ts); without one, a key given as
 *   `api_key` / `Authorization` is sent as the bearer token (an access token obtained elsewhere).
 */
import { anthropicErrorInfo, anthropicEventToChunks, fromAnthropicResponse, toAnthropicRequest } from '@gateway/provider-anthropic';
import { targetKey } from '@gateway/provider-openai-compatible';
import { fromGeminiResponse, geminiError, geminiStreamChunks, toGeminiRequest } from '@gateway/provider-google';
import { assistantPrefill, definePlugin, Errors, type EndpointTranslator, type OutboundGuard, type ProviderAdapter, type ProviderCall, Services, type TargetConfig } from '@gateway/sdk';
import { accessToken, parseServiceAccount } from './auth.ts';
import { fromVertexEmbedResponse, toVertexEmbedRequest } from './embed.ts';
import { vertexFields } from './fields.ts';
import { methodPath, publisherOf, regionOf, resolveModel } from './models.ts';

export { accessToken, CLOUD_PLATFORM_SCOPE, clearTokenCache, DEFAULT_TOKEN_URI, JWT_BEARER_GRANT, parseServiceAccount, signAssertion, type ServiceAccount } from './auth.ts';
export { fromVertexEmbedResponse, toVertexEmbedRequest } from './embed.ts';
export { DEFAULT_REGION, methodPath, projectOf, publisherOf, regionOf, resolveModel, type Publisher, type VertexModel } from './models.ts';

const PROVIDER = 'vertex-ai';

/** The public base URL for a target's region (what a custom host replaces). */
export function vertexBaseUrl(target: TargetConfig): string {
  const region = regionOf(target);
  if (region === 'global') return 'https://aiplatform.googleapis.com';
  if (!/^[a-z0-9-]+$/.test(region)) throw Errors.badRequest(`svcC_region ${JSON.stringify(region.slice(0, 64))} is not a region`, 'svcC_region');
  return `https://${region}-aiplatform.googleapis.com`;
}

function unsupportedPublisher(publisher: string): never {
  throw Errors.badRequest(`vertex-ai: models of the publisher "${publisher}" are not supported for chat (google and anthropic are)`, 'model');
}

const chatComplete: EndpointTranslator = {
  path(target, body) {
    const model = resolveModel(body.model, target);
    const stream = body.stream === true;
    if (model.publisher === 'anthropic') return methodPath(model, stream ? 'streamRawPredict' : 'rawPredict');
    if (model.publisher !== 'google') unsupportedPublisher(model.publisher);
    return methodPath(model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
  },
  request(body, target, ctx) {
    const model = resolveModel(body.model, target);
    if (model.publisher === 'anthropic') return toAnthropicRequest(body, target, ctx, { vertex: true });
    if (model.publisher !== 'google') unsupportedPublisher(model.publisher);
    return toGeminiRequest(body, { model: model.name, includeThoughts: !ctx.strictWireCompliance });
  },
  // The answer side knows the model the client asked for (ctx.model), which names the publisher.
  response: (json, ctx) => (publisherOf(ctx.model) === 'anthropic' ? fromAnthropicResponse(json, ctx) : fromGeminiResponse(json, ctx)),
  stream: {
    framing: 'sse',
    toChunks: (event, state, ctx) =>
      publisherOf(ctx.model) === 'anthropic'
        ? anthropicEventToChunks(event, state, ctx, { provider: PROVIDER })
        : geminiStreamChunks(event, state, ctx, { provider: PROVIDER }),
  },
  // Claude models continue a trailing assistant message, as on Anthropic's API (its text may not end in whitespace);
  // Gemini models do not (a broken stream is regenerated there).
  prefill: (body, text) =>
    publisherOf(typeof body.model === 'string' ? body.model : undefined) === 'anthropic' ? assistantPrefill(body, text, { trimTrailingWhitespace: true }) : undefined,
};

const embed: EndpointTranslator = {
  path(target, body) {
    const model = resolveModel(body.model, target);
    if (model.publisher !== 'google') throw Errors.badRequest(`vertex-ai: embeddings are offered by google models, not ${model.publisher}`, 'model');
    return methodPath(model, 'predict');
  },
  request: (body) => toVertexEmbedRequest(body),
  response: (json, ctx) => fromVertexEmbedResponse(json, ctx),
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Model Garden's list of Google's models (`v1beta1/publishers/google/models`) as OpenAI's model list. */
const listModels: EndpointTranslator = {
  path: () => '/v1beta1/publishers/google/models?pageSize=1000',
  response(json) {
    if (!isObject(json) || (json.publisherModels !== undefined && !Array.isArray(json.publisherModels))) throw new Error('expected {publisherModels: [...]}');
    const models = (json.publisherModels as unknown[] | undefined) ?? [];
    return {
      object: 'list',
      data: models.filter(isObject).map((m) => ({
        id: typeof m.name === 'string' ? m.name.replace(/^publishers\/[^/]+\/models\//, '') : '',
        object: 'model',
        created: 0,
        owned_by: 'google',
      })),
    };
  },
};

/** `outbound`: the gateway's guard, through which a service account's token_uri is fetched. */
export async function authorizeVertex(call: ProviderCall, target: TargetConfig, outbound?: OutboundGuard): Promise<ProviderCall> {
  let token: string | undefined;
  if (target.svcC_service_account_json !== undefined)
    token = await accessToken(parseServiceAccount(target.svcC_service_account_json), undefined, outbound);
  else token = targetKey(target);
  if (!token) return call;
  return { ...call, headers: { ...call.headers, authorization: `Bearer ${token}` } };
}

export const vertexAi: ProviderAdapter = {
  id: PROVIDER,
  baseUrl: vertexBaseUrl,
  authorize: authorizeVertex,
  endpoints: { chatComplete, embed, listModels },
  targetFields: vertexFields,
  pricing: new URL('../pricing.json', import.meta.url),
  // Google's error body, or Anthropic's for errors an Anthropic model itself reports.
  error: (json, status) => (isObject(json) && json.type === 'error' ? anthropicErrorInfo(json, status) : (geminiError(json) ?? anthropicErrorInfo(json, status))),
};

export default definePlugin({
  setup(api) {
    // A token_uri comes from the config's service-account JSON: it is fetched through the gateway's outbound guard.
    const outbound = api.optional(Services.hostGuard);
    api.provider(outbound ? { ...vertexAi, authorize: (call, target) => authorizeVertex(call, target, outbound) } : vertexAi);
  },
});
