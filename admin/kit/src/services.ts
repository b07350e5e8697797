/** Other plugins' services, which may load after this one or not at all (the lookups themselves are the SDK's). */
import type { PluginApi } from '@gateway/sdk';
export { lazyService, optionalService } from '@gateway/sdk';
import { type SecretBox, secretBoxFromEnv } from './crypto.ts';

/**
 * The deployment's SecretBox, made when first needed: only a stored object with secrets needs the key, and a MySQL
 * deployment without GATEWAY_ENCRYPTION_KEY fails at that point rather than at start.
 */
export function lazySecretBox(env: PluginApi['env']): () => SecretBox {
  let box: SecretBox | undefined;
  return () => (box ??= secretBoxFromEnv(env));
}
