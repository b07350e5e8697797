/**
 * Services administration plugins offer each other. Declared here so that a plugin codes against the contract,
 * not against another plugin's package.
 */
import type { Json } from '@gateway/sdk';

export type RotationPeriod = 'weekly' | 'monthly';

/**
 * Service `organisationSettings` (settings plugin): the effective API-key settings of an organisation, or of a
 * workspace (its overrides applied over the organisation's).
 */
export interface KeySettings {
  /** Create a default workspace-user key for a member who joins a workspace. */
  user_api_key_auto_create: boolean;
  /** Enforced rotation period of workspace-user keys; null: none enforced. */
  user_api_key_rotation_period: RotationPeriod | null;
  /** Lifetime of auto-created user keys in seconds; null: no expiry. Workspace-level only. */
  user_api_key_ttl: number | null;
}

export interface OrganisationSettingsService {
  keySettings(organisationId: string, workspaceId: string | null): Promise<KeySettings>;
}

/** SPEC.md's security settings, with their defaults. */
export interface SecuritySettings {
  organisationAdminsViewLogs: boolean;
  organisationAdminsViewLogMetadata: boolean;
  membersViewAllData: boolean;
  managersViewAllData: boolean;
  membersViewPrompts: boolean;
  membersWritePrompts: boolean;
  managersViewPrompts: boolean;
  managersWritePrompts: boolean;
  membersViewAnalytics: boolean;
  managersViewAnalytics: boolean;
  managersWriteWsIntegrations: boolean;
  managersWriteWsMcpIntegrations: boolean;
  managersWriteMcpServers: boolean;
}

/** Service `securitySettings` (settings plugin): effective settings, workspace overrides applied where allowed. */
export interface SecuritySettingsService {
  get(organisationId: string, workspaceId: string | null): Promise<SecuritySettings>;
}

/**
 * A secret mapping on an integration, a virtual key or an MCP integration: the value of `target_field` (a path in
 * the stored credentials, dots for nesting) comes from a secret reference at request time.
 */
export interface SecretMapping {
  target_field: string;
  secret_reference_id: string;
  /** The key inside the stored secret (a JSON secret, a KV v2 data map); absent: the whole secret value. */
  secret_key?: string;
  /** `json`: the value is a stringified JSON value, parsed into the field. Default `string`. */
  value_format?: 'string' | 'json';
}

/** Service `secretReferences` (secret-references plugin). */
export interface SecretResolver {
  /** Validates mappings at write time: each reference exists and the workspace may use it (400/403 otherwise). */
  check(organisationId: string, workspaceIds: readonly string[] | 'all', mappings: readonly SecretMapping[]): Promise<void>;
  /**
   * The mapped values for a request from `workspaceId`, by target_field; cached briefly, so a rotated secret is
   * picked up within the cache lifetime. Rejects with a GatewayError (403 for a workspace without access, 502
   * when the manager cannot be reached).
   */
  resolve(organisationId: string, workspaceId: string, mappings: readonly SecretMapping[]): Promise<Record<string, Json>>;
}

/** Writes `value` at a dotted path of `target`, creating objects on the way. */
export function setPath(target: Record<string, Json>, path: string, value: Json): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, Json>;
  }
  node[parts[parts.length - 1] as string] = value;
}
