/** Session settings of the organisation (owners and admins). */
import { json } from '@gateway/admin-kit';
import type { AdminRoute } from '@gateway/sdk';
import { sessionChange } from '../session.ts';
import type { RouteDeps } from './deps.ts';

export function sessionRoutes({ store }: RouteDeps): AdminRoute[] {
  const view = async (organisationId: string) => ({
    object: 'session_settings',
    organisation_id: organisationId,
    ...(await store.session(organisationId)),
  });
  return [
    {
      method: 'GET',
      path: '/settings/session',
      scope: 'settings.read',
      role: 'admin',
      handle: async (req) => json(await view(req.caller.organisationId)),
    },
    {
      method: 'PUT',
      path: '/settings/session',
      scope: 'settings.write',
      role: 'admin',
      async handle(req) {
        const change = sessionChange(req.body);
        const organisationId = req.caller.organisationId;
        const before = await view(organisationId);
        await store.write(organisationId, 'session', null, change);
        const after = await view(organisationId);
        req.audit = { resource: 'session_settings', resourceId: organisationId, action: 'update', workspaceId: null, before, after };
        return json(after);
      },
    },
  ];
}
