/**
 * The services administration plugins offer each other, each of which may be missing (its plugin disabled): the
 * tokens live here, with their contracts (contracts.ts), so that a plugin codes against the contract, not against
 * another plugin's package. Look them up with `api.optional(...)` in `onReady` (or in setup when the provider is
 * required).
 */
import { defineService, type PluginApi } from '@gateway/sdk';
import type { OrganisationSettingsService, SecretResolver, SecuritySettingsService, SubjectRateLimits, SubjectUsageLimits } from './contracts.ts';
import { type SecretBox, secretBoxFromEnv } from './crypto.ts';
import type { AdminEvents } from './events.ts';

export const AdminServices = {
  /** Membership and archive events (identity plugin). */
  events: defineService<AdminEvents>('adminEvents'),
  /** Effective API-key settings (settings plugin). */
  organisationSettings: defineService<OrganisationSettingsService>('organisationSettings'),
  /** Effective security settings (settings plugin). */
  securitySettings: defineService<SecuritySettingsService>('securitySettings'),
  /** Secrets from external managers (secret-references plugin). */
  secretReferences: defineService<SecretResolver>('secretReferences'),
  /** The `usage_limits` of API keys, virtual keys and integration workspaces (usage-limits plugin). */
  usageLimits: defineService<SubjectUsageLimits>('usageLimits'),
  /** The `rate_limits` of API keys, virtual keys and integration workspaces (rate-limits plugin). */
  rateLimits: defineService<SubjectRateLimits>('rateLimits'),
} as const;

/**
 * The deployment's SecretBox, made when first needed: only a stored object with secrets needs the key, and a MySQL
 * deployment without GATEWAY_ENCRYPTION_KEY fails at that point rather than at start.
 */
export function lazySecretBox(env: PluginApi['env']): () => SecretBox {
  let box: SecretBox | undefined;
  return () => (box ??= secretBoxFromEnv(env));
}
