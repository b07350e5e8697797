import type { ProviderCall, TargetConfig } from '@gateway/sdk';

/** How a vendor wants its key: `Authorization: Bearer <key>`, or a named header carrying the key. */
export type KeyAuth = { kind: 'bearer' } | { kind: 'header'; name: string; prefix?: string } | { kind: 'none' };

/** The key a target carries: config `api_key`, or `Authorization: Bearer …` given in the config. */
export function targetKey(target: TargetConfig): string | undefined {
  if (target.api_key) return target.api_key;
  const auth = target.Authorization;
  return typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '') : undefined;
}

export function applyKeyAuth(call: ProviderCall, auth: KeyAuth, key: string | undefined): ProviderCall {
  if (auth.kind === 'none' || !key) return call;
  const headers = { ...call.headers };
  if (auth.kind === 'bearer') headers.authorization = `Bearer ${key}`;
  else headers[auth.name] = (auth.prefix ?? '') + key;
  return { ...call, headers };
}
