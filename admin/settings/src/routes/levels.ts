/**
 * The GET and PUT pair every settings category has: at the organisation level (owners and admins), and for the
 * overridable ones at a workspace's level too (its admins, organisation owners and admins). A PUT answers the
 * view after the change and audits the views before and after.
 */
import { json } from '@gateway/admin-kit';
import type { AdminRoute } from '@gateway/sdk';
import type { SettingsChange } from '../security.ts';
import type { SettingCategory } from '../tables.ts';
import { administeredWorkspace, type RouteDeps } from './deps.ts';

export interface SettingsLevel<Scope extends unknown[]> {
  /** After `/settings/` (and after `/workspaces/:workspaceId/settings/` at the workspace level). */
  path: string;
  category: SettingCategory;
  /** The audit log's resource name. */
  resource: string;
  /** The view answered and audited: the organisation id, then the workspace id at the workspace level. */
  view: (organisationId: string, ...scope: Scope) => Promise<object>;
  change: (body: unknown) => SettingsChange;
}

export function organisationLevelRoutes({ store }: Pick<RouteDeps, 'store'>, level: SettingsLevel<[]>): AdminRoute[] {
  const path = `/settings/${level.path}`;
  return [
    { method: 'GET', path, scope: 'settings.read', role: 'admin', handle: async (req) => json(await level.view(req.caller.organisationId)) },
    {
      method: 'PUT',
      path,
      scope: 'settings.write',
      role: 'admin',
      async handle(req) {
        const change = level.change(req.body);
        const organisationId = req.caller.organisationId;
        const before = await level.view(organisationId);
        await store.write(organisationId, level.category, null, change);
        const after = await level.view(organisationId);
        req.audit = { resource: level.resource, resourceId: organisationId, action: 'update', workspaceId: null, before, after };
        return json(after);
      },
    },
  ];
}

export function workspaceLevelRoutes({ database, store }: RouteDeps, level: SettingsLevel<[workspaceId: string]>): AdminRoute[] {
  const path = `/workspaces/:workspaceId/settings/${level.path}`;
  return [
    {
      method: 'GET',
      path,
      scope: 'settings.read',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        return json(await level.view(req.caller.organisationId, workspace.id));
      },
    },
    {
      method: 'PUT',
      path,
      scope: 'settings.write',
      async handle(req) {
        const workspace = await administeredWorkspace(database, req);
        const change = level.change(req.body);
        const organisationId = req.caller.organisationId;
        const before = await level.view(organisationId, workspace.id);
        await store.write(organisationId, level.category, workspace.id, change);
        const after = await level.view(organisationId, workspace.id);
        req.audit = { resource: level.resource, resourceId: workspace.id, action: 'update', workspaceId: workspace.id, before, after };
        return json(after);
      },
    },
  ];
}
