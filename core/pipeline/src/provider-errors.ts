import { Errors, type GatewayError, type ProviderAdapter, type ProviderErrorInfo } from '@gateway/sdk';

/** OpenAI's error body: `{"error": {"message", "type", "param", "code"}}` (also the default for compatible vendors). */
function openAiError(json: unknown): ProviderErrorInfo | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const error = (json as { error?: unknown }).error;
  if (typeof error === 'string') return { message: error };
  if (typeof error !== 'object' || error === null) {
    const message = (json as { message?: unknown }).message;
    return typeof message === 'string' ? { message } : undefined;
  }
  const e = error as Record<string, unknown>;
  if (typeof e.message !== 'string') return undefined;
  return {
    message: e.message,
    type: typeof e.type === 'string' ? e.type : undefined,
    code: typeof e.code === 'string' ? e.code : e.code === null ? null : e.code === undefined ? undefined : String(e.code),
    param: typeof e.param === 'string' ? e.param : null,
  };
}

/** A provider's error answer as the gateway's error, with `provider` set and the provider's own message kept. */
export function normaliseProviderError(provider: ProviderAdapter, status: number, text: string): GatewayError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const info = (json !== undefined && (provider.error?.(json, status) ?? openAiError(json))) || undefined;
  const message = info?.message ?? (text.trim().slice(0, 500) || `provider answered with status ${status}`);
  return Errors.provider(provider.id, status, message, info?.type ?? 'provider_error', info?.code ?? null, info?.param ?? null);
}
