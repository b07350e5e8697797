/**
 * /workspaces/:workspaceId/cache-settings: the workspace's response-cache settings (its embeddings target for the
 * semantic cache, a saved config of that workspace). Any member reads them; workspace admins and organisation owners
 * and admins change them.
 */
import { savedConfigs } from '@gateway/admin-configs';
import { findWorkspace, requireActive, type WorkspaceRow } from '@gateway/admin-identity';
import { iso, json, requireWorkspaceRole, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, type Caller, type Database, eq, Errors, type GatewayConfig, GatewayError, or } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { CacheSettingsRow, CacheSettingsStore } from '../cache-settings.ts';

/** Service `savedConfigs` (admin/configs): a saved config by id or slug, as `caller` may use it. */
export type SavedConfigLookup = (ref: string, caller: Caller | undefined) => GatewayConfig | undefined;

export interface CacheSettingsDeps {
  database: Database;
  cacheSettings: CacheSettingsStore;
  /** Service `savedConfigs`, when the saved-config plugin is loaded. */
  savedConfigs: () => SavedConfigLookup | undefined;
}

const PARAM = 'embeddings_config';

const checkPut = validator(
  Type.Object({ embeddings_config: Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()]) }, { additionalProperties: false }),
);

export function presentCacheSettings(workspaceId: string, row: CacheSettingsRow | undefined) {
  return {
    object: 'workspace_cache_settings',
    workspace_id: workspaceId,
    embeddings_config: row?.embeddings_config ?? null,
    updated_at: iso(row?.updated_at),
  };
}

/**
 * The id of the saved config `ref` (an id or a slug) names for the workspace: resolved through service
 * `savedConfigs` as a caller of that workspace (so another workspace's config is refused even by id), then its id
 * read from saved_configs. 400 naming embeddings_config when there is none such.
 */
async function savedConfigId(deps: CacheSettingsDeps, workspace: WorkspaceRow, ref: string): Promise<string> {
  const unknown = () =>
    Errors.badRequest(`${PARAM}: no saved config ${JSON.stringify(ref.slice(0, 128))} in workspace ${workspace.slug}`, PARAM);
  const resolve = deps.savedConfigs();
  if (!resolve) throw Errors.badRequest(`${PARAM}: saved configs are not available (the saved-config plugin is not loaded)`, PARAM);
  const caller: Caller = {
    apiKeyId: '',
    organisationId: workspace.organisation_id,
    workspaceId: workspace.id,
    scopes: [],
    keyType: 'workspace-service',
    userId: null,
  };
  let config: GatewayConfig | undefined;
  try {
    config = resolve(ref, caller);
  } catch (error) {
    if (error instanceof GatewayError) throw unknown(); // another workspace's config: not one of this workspace
    throw error;
  }
  if (config === undefined) throw unknown();
  const rows = await deps.database.select(savedConfigs, {
    where: (c) => and(eq(c.organisation_id, workspace.organisation_id), eq(c.workspace_id, workspace.id), or(eq(c.id, ref), eq(c.slug, ref))),
    limit: 2,
    fresh: true,
  });
  const row = rows.find((r) => r.id === ref) ?? rows[0];
  if (!row) throw unknown(); // deleted a moment ago
  return row.id;
}

export function cacheSettingsRoutes(deps: CacheSettingsDeps): AdminRoute[] {
  const { database, cacheSettings } = deps;
  const path = '/workspaces/:workspaceId/cache-settings';
  const workspaceOf = (req: AdminRequest) => findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '', { fresh: true });
  return [
    {
      method: 'GET',
      path,
      scope: 'workspaces.read',
      async handle(req) {
        const workspace = await workspaceOf(req);
        await requireWorkspaceRole(req.principal, workspace.id, 'member');
        return json(presentCacheSettings(workspace.id, await cacheSettings.read(workspace.id)));
      },
    },
    {
      method: 'PUT',
      path,
      scope: 'workspaces.write',
      async handle(req) {
        const workspace = await workspaceOf(req);
        await requireWorkspaceRole(req.principal, workspace.id, 'admin');
        const body = checkPut(req.body);
        requireActive(workspace);
        const target = body.embeddings_config === null ? null : await savedConfigId(deps, workspace, body.embeddings_config);
        const { before, after } = await cacheSettings.write(workspace.organisation_id, workspace.id, target);
        const view = presentCacheSettings(workspace.id, after);
        req.audit = {
          resource: 'workspace_cache_settings',
          resourceId: workspace.id,
          action: 'update',
          workspaceId: workspace.id,
          before: presentCacheSettings(workspace.id, before),
          after: view,
        };
        return json(view);
      },
    },
  ];
}
