import type { AdminRoute } from '@gateway/sdk';
import { inviteRoutes } from './invites.ts';
import { memberRoutes } from './members.ts';
import type { IdentityDeps } from './shared.ts';
import { userRoutes } from './users.ts';
import { workspaceRoutes } from './workspaces.ts';

export type { IdentityDeps } from './shared.ts';

/** Every identity route; the invitation routes come before `/users/:userId` (static paths first). */
export function identityRoutes(deps: IdentityDeps): AdminRoute[] {
  return [...workspaceRoutes(deps), ...memberRoutes(deps), ...inviteRoutes(deps), ...userRoutes(deps)];
}
