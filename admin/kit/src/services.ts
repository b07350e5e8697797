/** Other plugins' services, which may load after this one or not at all. */
import type { PluginApi } from '@gateway/sdk';
import { type SecretBox, secretBoxFromEnv } from './crypto.ts';

/** The service, or undefined when no plugin provides it (yet). */
export function optionalService<T>(api: Pick<PluginApi, 'service'>, name: string): T | undefined {
  try {
    return api.service<T>(name);
  } catch {
    return undefined;
  }
}

/** A service looked up when first needed and kept once found (plugins load in order; a later one may provide it). */
export function lazyService<T>(api: Pick<PluginApi, 'service'>, name: string): () => T | undefined {
  let found: T | undefined;
  return () => (found ??= optionalService<T>(api, name));
}

/**
 * The deployment's SecretBox, made when first needed: only a stored object with secrets needs the key, and a MySQL
 * deployment without GATEWAY_ENCRYPTION_KEY fails at that point rather than at start.
 */
export function lazySecretBox(env: PluginApi['env']): () => SecretBox {
  let box: SecretBox | undefined;
  return () => (box ??= secretBoxFromEnv(env));
}
