import { type AssistantPrefillOptions, assistantPrefill, type EndpointTranslator, type PricingCatalogue, type ProviderAdapter, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { applyKeyAuth, type KeyAuth, targetKey } from './auth.ts';

export { applyKeyAuth, targetKey, type KeyAuth };

/** A vendor whose API is OpenAI's: where it lives, how it authenticates, and what it lacks. */
export interface OpenAICompatibleVendor {
  id: string;
  /** The vendor's `…/v1`-style base URL; a custom host replaces it. */
  baseUrl: string | ((target: TargetConfig) => string);
  /** Default bearer. */
  auth?: KeyAuth;
  /** Endpoints the vendor does not offer (default: it offers all four). */
  unsupported?: ('chatComplete' | 'complete' | 'embed' | 'moderate')[];
  /** Extra headers every call carries (vendor scoping such as an organisation). */
  headers?(target: TargetConfig): Record<string, string>;
  /** The vendor's list prices: its package's pricing.json (`new URL('../pricing.json', import.meta.url)`). */
  pricing?: URL | PricingCatalogue;
  /**
   * The vendor honours `stream_options.include_usage` as OpenAI documents it (a last chunk with empty `choices` and the
   * usage, `"usage": null` on the others): the gateway then asks for usage on every stream, so that each one's tokens
   * and cost are known, and hides it from clients that did not ask. Set it only for a vendor whose documentation says
   * so: an unknown field may be refused, or answered in another shape.
   */
  streamOptions?: boolean;
  /**
   * The vendor continues a trailing assistant message, and what it asks for beyond it (vLLM:
   * `continue_final_message: true, add_generation_prompt: false`): a broken stream is then continued with the partial
   * answer as prefill (docs/streaming.md). Set it only for a server documented to; others regenerate.
   */
  prefill?: AssistantPrefillOptions;
  /**
   * The vendor serves OpenAI's Responses API at `/responses`: POST /v1/responses is then forwarded to it as it is
   * (docs/responses.md); without it the gateway translates Responses over chat completions.
   */
  responses?: boolean;
}

const path = (p: string): EndpointTranslator => ({ path: () => p });

/** OpenAI's own paths; no request or response translation, so answers pass through byte for byte. */
const OPENAI_ENDPOINTS = {
  chatComplete: path('/chat/completions'),
  complete: path('/completions'),
  embed: path('/embeddings'),
  moderate: path('/moderations'),
} as const;

/** The streaming endpoints of a vendor with `streamOptions`: OpenAI SSE, whose usage the gateway asks for. */
const STREAMS_WITH_USAGE = {
  chatComplete: { ...OPENAI_ENDPOINTS.chatComplete, stream: { framing: 'sse', requestsUsage: true } },
  complete: { ...OPENAI_ENDPOINTS.complete, stream: { framing: 'sse', requestsUsage: true } },
} as const satisfies ProviderAdapter['endpoints'];

export function openAICompatible(vendor: OpenAICompatibleVendor): ProviderAdapter {
  const auth = vendor.auth ?? { kind: 'bearer' };
  const endpoints: ProviderAdapter['endpoints'] = vendor.streamOptions ? { ...OPENAI_ENDPOINTS, ...STREAMS_WITH_USAGE } : { ...OPENAI_ENDPOINTS };
  for (const missing of vendor.unsupported ?? []) delete endpoints[missing];
  if (vendor.responses) endpoints.responses = path('/responses');
  const prefill = vendor.prefill;
  if (prefill && endpoints.chatComplete) endpoints.chatComplete = { ...endpoints.chatComplete, prefill: (body, text) => assistantPrefill(body, text, prefill) };
  const base = vendor.baseUrl;
  return {
    id: vendor.id,
    baseUrl: typeof base === 'string' ? () => base : base,
    authorize(call: ProviderCall, target: TargetConfig): ProviderCall {
      const withKey = applyKeyAuth(call, auth, targetKey(target));
      const extra = vendor.headers?.(target);
      return extra && Object.keys(extra).length ? { ...withKey, headers: { ...withKey.headers, ...extra } } : withKey;
    },
    endpoints,
    ...(vendor.pricing ? { pricing: vendor.pricing } : {}),
  };
}
