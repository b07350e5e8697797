/**
 * API-key settings: the organisation's (owners and admins), and a workspace's overrides (workspace admins,
 * organisation owners and admins), read by the api-keys plugin through service `organisationSettings`.
 */
import { json } from '@gateway/admin-kit';
import type { AdminRoute } from '@gateway/sdk';
import { keyOverrides, keySettingsChange } from '../key-settings.ts';
import { administeredWorkspace, type RouteDeps } from './deps.ts';

export function keySettingsRoutes({ database, store }: RouteDeps): AdminRoute[] {
  const organisationView = async (organisationId: string) => {
    const { user_api_key_auto_create, user_api_key_rotation_period } = await store.keySettings(organisationId, null);
    return { object: 'api_key_settings', organisation_id: organisationId, user_api_key_auto_create, user_api_key_rotation_period };
  };
  const workspaceView = async (organisationId: string, workspaceId: string) => ({
    object: 'workspace_api_key_settings',
    workspace_id: workspaceId,
    overrides: keyOverrides(await store.stored(organisationId, 'api_keys', workspaceId)),
    effective: await store.keySettings(organisationId, workspaceId),
  });

  return [
    {
      method: 'GET',
      path: '/settings/api-keys',
      scope: 'settings.read',
      role: 'admin',
      handle: async (req) => json(await organisationView(req.caller.organisationId)),
    },
    {
      method: 'PUT',
      path: '/settings/api-keys',
      scope: 'settings.write',
      role: 'admin',
      async handle(req) {
        const change = keySettingsChange(req.body, 'organisation');
        const organisationId = req.caller.organisationId;
        const before = await organisationView(organisationId);
        await store.write(organisationId, 'api_keys', null, change);
        const after = await organisationView(organisationId);
        req.audit = { resource: 'api_key_settings', resourceId: organisationId, action: 'update', workspaceId: null, before, after };
        return json(after);
      },
    },
    {
      method: 'GET',
      path: '/workspaces/:workspaceId/settings/api-keys',
      scope: 'settings.read',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        return json(await workspaceView(req.caller.organisationId, workspace.id));
      },
    },
    {
      method: 'PUT',
      path: '/workspaces/:workspaceId/settings/api-keys',
      scope: 'settings.write',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        const change = keySettingsChange(req.body, 'workspace');
        const organisationId = req.caller.organisationId;
        const before = await workspaceView(organisationId, workspace.id);
        await store.write(organisationId, 'api_keys', workspace.id, change);
        const after = await workspaceView(organisationId, workspace.id);
        req.audit = { resource: 'workspace_api_key_settings', resourceId: workspace.id, action: 'update', workspaceId: workspace.id, before, after };
        return json(after);
      },
    },
  ];
}
