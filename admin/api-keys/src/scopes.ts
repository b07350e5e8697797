/**
 * Scopes: what this package's routes need (SCOPES), and the catalogue of every scope a key may be given. A key is
 * created only with scopes of the catalogue; a plugin whose routes need scopes of its own adds them with the
 * `apiKeyScopes` service (`add(SCOPES)`) during its setup.
 */
import { ALL_SCOPES, type ApiKeyType, MODEL_CALL_SCOPES } from '@gateway/sdk';

/** The rotation scope of each key type; `api_keys.rotate` covers all three. */
export const ROTATE_SCOPE_OF: Readonly<Record<ApiKeyType, string>> = {
  'organisation-service': 'organisation_service_api_keys.rotate',
  'workspace-service': 'workspace_service_api_keys.rotate',
  'workspace-user': 'workspace_user_api_keys.rotate',
};

/** The scopes of this package's routes. */
export const SCOPES = [
  'api_keys.read',
  'api_keys.write',
  'api_keys.delete',
  'api_keys.rotate',
  'organisation_service_api_keys.rotate',
  'workspace_service_api_keys.rotate',
  'workspace_user_api_keys.rotate',
] as const;

/** Any one of these reaches the rotate and reveal routes; the handler then checks the key's type. */
export const ROTATE_SCOPES: readonly string[] = ['api_keys.rotate', ...Object.values(ROTATE_SCOPE_OF)];

const crud = (resource: string) => [`${resource}.read`, `${resource}.write`, `${resource}.delete`];

/** Every scope known to the gateway at build time: `<resource>.<action>`. */
export const SCOPE_CATALOGUE: readonly string[] = [
  // Gateway calls: each kind of route's scope (GATEWAY_CALL_SCOPES says which), and agent invocation.
  ...MODEL_CALL_SCOPES,
  'agents.invoke',
  ...SCOPES,
  ...crud('workspaces'),
  ...crud('workspace_users'),
  ...crud('users'),
  ...crud('settings'),
  ...crud('email_domains'),
  ...crud('integrations'),
  ...crud('providers'),
  ...crud('virtual_keys'),
  ...crud('configs'),
  ...crud('prompts'),
  ...crud('guardrails'),
  ...crud('rate_limits_policies'),
  ...crud('usage_limits_policies'),
  ...crud('secret_references'),
  ...crud('mcp_servers'),
  ...crud('mcp_integrations'),
  ...crud('organisation_agent_integrations'),
  ...crud('workspace_agent_integrations'),
  ...crud('agent_servers'),
  ...crud('agent_server_skills'),
  ...crud('agent_integration_skills'),
  ...crud('agent_server_user_access'),
  'models.read',
  'logs.read',
  'logs.write',
  'logs.export',
  'analytics.read',
  'audit_logs.read',
  'scim.read',
  'scim.write',
];

/** The catalogue in force: the built-in one plus what plugins added (service `apiKeyScopes`). */
export class ScopeCatalogue {
  private readonly known = new Set<string>(SCOPE_CATALOGUE);
  /**
   * Every scope of the catalogue, kept up to date by add(): the route scope "any scope at all" (GET /api-keys/self),
   * which a route declares once while plugins still add theirs.
   */
  readonly any: string[] = [...SCOPE_CATALOGUE];

  /** Adds scopes of a plugin's routes; each must look like `<resource>.<action>`. */
  add(scopes: readonly string[]): void {
    for (const scope of scopes) {
      if (!/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(scope)) throw new Error(`not a scope: ${scope}`);
      if (!this.known.has(scope)) this.any.push(scope);
      this.known.add(scope);
    }
  }

  has(scope: string): boolean {
    return scope === ALL_SCOPES || this.known.has(scope);
  }

  list(): string[] {
    return [...this.known].sort();
  }
}

/** Whether `scopes` grant `scope` (directly or through `*`). */
export function grants(scopes: readonly string[], scope: string): boolean {
  return scopes.includes(ALL_SCOPES) || scopes.includes(scope);
}

/** Whether a key with `scopes` may rotate keys of `type`. */
export function mayRotate(scopes: readonly string[], type: ApiKeyType): boolean {
  return grants(scopes, 'api_keys.rotate') || grants(scopes, ROTATE_SCOPE_OF[type]);
}
