/** Session settings of the organisation (owners and admins). */
import type { AdminRoute } from '@gateway/sdk';
import { sessionChange } from '../session.ts';
import type { RouteDeps } from './deps.ts';
import { organisationLevelRoutes } from './levels.ts';

export function sessionRoutes(deps: RouteDeps): AdminRoute[] {
  return organisationLevelRoutes(deps, {
    path: 'session',
    category: 'session',
    resource: 'session_settings',
    view: async (organisationId) => ({ object: 'session_settings', organisation_id: organisationId, ...(await deps.store.session(organisationId)) }),
    change: sessionChange,
  });
}
