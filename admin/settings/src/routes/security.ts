/**
 * Security settings: the organisation's (owners and admins) and a workspace's overrides of the overridable ones
 * (workspace admins, organisation owners and admins).
 */
import { json } from '@gateway/admin-kit';
import type { AdminRoute } from '@gateway/sdk';
import { securityChange, securityOverrides } from '../security.ts';
import { administeredWorkspace, type RouteDeps } from './deps.ts';

export function securityRoutes({ database, store }: RouteDeps): AdminRoute[] {
  const organisationView = async (organisationId: string) => ({
    object: 'security_settings',
    organisation_id: organisationId,
    ...(await store.get(organisationId, null)),
  });
  const workspaceView = async (organisationId: string, workspaceId: string) => ({
    object: 'workspace_security_settings',
    workspace_id: workspaceId,
    overrides: securityOverrides(await store.stored(organisationId, 'security', workspaceId)),
    effective: await store.get(organisationId, workspaceId),
  });

  return [
    {
      method: 'GET',
      path: '/settings/security',
      scope: 'settings.read',
      role: 'admin',
      handle: async (req) => json(await organisationView(req.caller.organisationId)),
    },
    {
      method: 'PUT',
      path: '/settings/security',
      scope: 'settings.write',
      role: 'admin',
      async handle(req) {
        const change = securityChange(req.body, 'organisation');
        const organisationId = req.caller.organisationId;
        const before = await organisationView(organisationId);
        await store.write(organisationId, 'security', null, change);
        const after = await organisationView(organisationId);
        req.audit = { resource: 'security_settings', resourceId: organisationId, action: 'update', workspaceId: null, before, after };
        return json(after);
      },
    },
    {
      method: 'GET',
      path: '/workspaces/:workspaceId/settings/security',
      scope: 'settings.read',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        return json(await workspaceView(req.caller.organisationId, workspace.id));
      },
    },
    {
      method: 'PUT',
      path: '/workspaces/:workspaceId/settings/security',
      scope: 'settings.write',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        const change = securityChange(req.body, 'workspace');
        const organisationId = req.caller.organisationId;
        const before = await workspaceView(organisationId, workspace.id);
        await store.write(organisationId, 'security', workspace.id, change);
        const after = await workspaceView(organisationId, workspace.id);
        req.audit = { resource: 'workspace_security_settings', resourceId: workspace.id, action: 'update', workspaceId: workspace.id, before, after };
        return json(after);
      },
    },
  ];
}
