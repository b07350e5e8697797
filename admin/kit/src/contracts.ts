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

/** What a `usage_limits` or `rate_limits` field is set on (docs/admin/policies.md, "Limits on keys"). */
export interface LimitSubject {
  readonly kind: 'api_key' | 'virtual_key' | 'integration_workspace';
  /** The API key, the virtual key, or the integration (for an integration's workspace access). */
  readonly id: string;
  readonly organisationId: string;
  /** The key's workspace (null: an organisation key); the workspace given access, for an integration. */
  readonly workspaceId: string | null;
  /** The object's name, for the alert e-mails. */
  readonly name: string;
}

/** Which object a limit belongs to, as lookups name it. */
export type LimitSubjectRef = Pick<LimitSubject, 'kind' | 'id' | 'workspaceId'>;

/** The `usage_limits` of an object as its answers show it. */
export interface UsageLimitsView {
  type: 'cost' | 'tokens';
  /** US dollars for `cost`, tokens for `tokens`. */
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'monthly' | 'weekly' | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  /** Used in the current period, in the limit's unit; null when the counters cannot be read. */
  current_usage: number | null;
}

/** One entry of the `rate_limits` of an object, as given and shown. */
export interface RateLimitView {
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd' | 'rpw';
  value: number;
}

/** A limits field's value checked against what is stored, ready to save once the object is written. */
export interface PreparedLimits {
  readonly subject: LimitSubject;
  /** The value removes the limits (null). */
  readonly removes: boolean;
}

/**
 * The service behind one limits field of API keys, virtual keys and integration workspace access: `usageLimits`
 * (usage-limits plugin) for `usage_limits`, `rateLimits` (rate-limits plugin) for `rate_limits`; absent when its
 * plugin is not loaded or its flag is off.
 */
export interface SubjectLimits<View> {
  /** Checks a body's value (null removes), merged over the stored limits; 400 listing every violation under `path`. */
  prepare(subject: LimitSubject, value: unknown, path: string): Promise<PreparedLimits>;
  /** Stores prepared values, after the objects were written. */
  save(prepared: readonly PreparedLimits[]): Promise<void>;
  /** The limits of objects, by `limitSubjectKey`; an object without any is absent. */
  views(subjects: readonly LimitSubjectRef[]): Promise<Map<string, View>>;
  /** Drops the limits of objects deleted (a revoked key, a removed access). */
  remove(subjects: readonly LimitSubjectRef[]): Promise<void>;
}

export type SubjectUsageLimits = SubjectLimits<UsageLimitsView>;
export type SubjectRateLimits = SubjectLimits<RateLimitView[]>;

/** The key of an object's limits: `<kind>:<id>`, and `:<workspace>` for an integration's workspace access. */
export function limitSubjectKey(s: LimitSubjectRef): string {
  return s.kind === 'integration_workspace' ? `${s.kind}:${s.id}:${s.workspaceId}` : `${s.kind}:${s.id}`;
}
