/**
 * API-key settings: the organisation's (owners and admins), and a workspace's overrides (workspace admins,
 * organisation owners and admins), read by the api-keys plugin through service `organisationSettings`.
 */
import type { AdminRoute } from '@gateway/sdk';
import { keyOverrides, keySettingsChange } from '../key-settings.ts';
import type { RouteDeps } from './deps.ts';
import { organisationLevelRoutes, workspaceLevelRoutes } from './levels.ts';

export function keySettingsRoutes(deps: RouteDeps): AdminRoute[] {
  const { store } = deps;
  return [
    ...organisationLevelRoutes(deps, {
      path: 'api-keys',
      category: 'api_keys',
      resource: 'api_key_settings',
      async view(organisationId) {
        const { user_api_key_auto_create, user_api_key_rotation_period } = await store.keySettings(organisationId, null);
        return { object: 'api_key_settings', organisation_id: organisationId, user_api_key_auto_create, user_api_key_rotation_period };
      },
      change: (body) => keySettingsChange(body, 'organisation'),
    }),
    ...workspaceLevelRoutes(deps, {
      path: 'api-keys',
      category: 'api_keys',
      resource: 'workspace_api_key_settings',
      view: async (organisationId, workspaceId) => ({
        object: 'workspace_api_key_settings',
        workspace_id: workspaceId,
        overrides: keyOverrides(await store.stored(organisationId, 'api_keys', workspaceId)),
        effective: await store.keySettings(organisationId, workspaceId),
      }),
      change: (body) => keySettingsChange(body, 'workspace'),
    }),
  ];
}
