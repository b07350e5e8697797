/**
 * The `anthropic` provider: OpenAI chat completions over Anthropic's Messages API (POST /v1/messages), the
 * gateway's own /v1/messages and /v1/messages/count_tokens passed through natively, and GET /v1/models in OpenAI's
 * list shape. Anthropic has no embeddings, moderations or text-completion endpoint of
 * OpenAI's kind, so those are not offered.
 *
 * The translators are pure functions exported for platforms that host Anthropic models with the same body
 * (Vertex AI rawPredict / streamRawPredict: `toAnthropicRequest(body, target, ctx, {vertex: true})`).
 */
import { targetKey } from '@gateway/provider-openai-compatible';
import { assistantPrefill, definePlugin, type ProviderAdapter, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { anthropicBatches } from './batches.ts';
import { anthropicErrorInfo } from './errors.ts';
import { toAnthropicRequest } from './request.ts';
import { fromAnthropicModelList, fromAnthropicResponse } from './response.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION } from './shared.ts';
import { anthropicEventToChunks } from './stream.ts';

export { anthropicBatches, fromMessageBatch, fromResultLine } from './batches.ts';
export { anthropicErrorInfo, anthropicStreamError, statusOfErrorType } from './errors.ts';
export { type AnthropicRequestOptions, toAnthropicRequest } from './request.ts';
export { fromAnthropicModelList, fromAnthropicResponse, toFinishReason, toOpenAIUsage } from './response.ts';
export {
  ANTHROPIC_BASE_URL,
  ANTHROPIC_VERSION,
  DEFAULT_MAX_TOKENS,
  JSON_TOOL_NAME,
  VERTEX_ANTHROPIC_VERSION,
} from './shared.ts';
export { type AnthropicStreamOptions, anthropicEventToChunks } from './stream.ts';

/**
 * `x-api-key` from the target's key and `anthropic-version: 2023-06-01`, unless the client forwarded its own version
 * (config `forward_headers`, which is also the only way `anthropic-beta` reaches Anthropic).
 */
export function authorizeAnthropic(call: ProviderCall, target: TargetConfig): ProviderCall {
  const headers: Record<string, string> = { ...call.headers };
  const key = targetKey(target);
  if (key) headers['x-api-key'] = key;
  headers['anthropic-version'] ??= ANTHROPIC_VERSION;
  return { ...call, headers };
}

export const anthropic: ProviderAdapter = {
  id: 'anthropic',
  baseUrl: () => ANTHROPIC_BASE_URL,
  authorize: authorizeAnthropic,
  endpoints: {
    chatComplete: {
      path: () => '/messages',
      request: (body, target, ctx) => toAnthropicRequest(body, target, ctx),
      response: (json, ctx) => fromAnthropicResponse(json, ctx),
      stream: { framing: 'sse', toChunks: (event, state, ctx) => anthropicEventToChunks(event, state, ctx) },
      // A trailing assistant message is continued (Anthropic's prefill); its text may not end in whitespace.
      prefill: (body, text) => assistantPrefill(body, text, { trimTrailingWhitespace: true }),
    },
    // Anthropic's own Messages API: POST /v1/messages and its token count pass through unchanged (no translation).
    messages: { path: () => '/messages' },
    countTokens: { path: () => '/messages/count_tokens' },
    listModels: {
      // Anthropic pages by 20 by default; one page of up to 1000 holds every model it offers.
      path: () => '/models?limit=1000',
      response: (json) => fromAnthropicModelList(json),
    },
  },
  // OpenAI's /v1/batches of chat lines run as Anthropic Message Batches (batches.ts).
  batches: anthropicBatches,
  error: anthropicErrorInfo,
  pricing: new URL('../pricing.json', import.meta.url),
};

export default definePlugin({ setup: (api) => api.provider(anthropic) });
