/**
 * Security settings: the organisation's (owners and admins) and a workspace's overrides of the overridable ones
 * (workspace admins, organisation owners and admins).
 */
import type { AdminRoute } from '@gateway/sdk';
import { securityChange, securityOverrides } from '../security.ts';
import type { RouteDeps } from './deps.ts';
import { organisationLevelRoutes, workspaceLevelRoutes } from './levels.ts';

export function securityRoutes(deps: RouteDeps): AdminRoute[] {
  const { store } = deps;
  return [
    ...organisationLevelRoutes(deps, {
      path: 'security',
      category: 'security',
      resource: 'security_settings',
      view: async (organisationId) => ({ object: 'security_settings', organisation_id: organisationId, ...(await store.get(organisationId, null)) }),
      change: (body) => securityChange(body, 'organisation'),
    }),
    ...workspaceLevelRoutes(deps, {
      path: 'security',
      category: 'security',
      resource: 'workspace_security_settings',
      view: async (organisationId, workspaceId) => ({
        object: 'workspace_security_settings',
        workspace_id: workspaceId,
        overrides: securityOverrides(await store.stored(organisationId, 'security', workspaceId)),
        effective: await store.get(organisationId, workspaceId),
      }),
      change: (body) => securityChange(body, 'workspace'),
    }),
  ];
}
