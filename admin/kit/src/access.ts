/** Role checks that depend on the resource: the workspace a request acts on. */
import { Errors, type Principal, type Role, roleAtLeast } from '@gateway/sdk';

/**
 * The caller's role in the workspace, at least `least`; 403 otherwise. No role at all: 404 with `missing` (what the
 * caller looked for is as good as absent when it cannot see its workspace).
 */
export async function requireWorkspaceRole(principal: Principal, workspaceId: string, least: Role = 'member', missing = 'No such workspace'): Promise<Role> {
  const role = await principal.workspaceRole(workspaceId);
  if (!role) throw Errors.notFound(missing);
  if (!roleAtLeast(role, least)) throw Errors.forbidden(`This needs the ${least} role in the workspace`);
  return role;
}

/** Organisation owner or admin (or an organisation-service key); 403 otherwise. */
export function requireOrgAdmin(principal: Principal): void {
  if (!principal.isOrgAdmin) throw Errors.forbidden('This needs the organisation owner or admin role');
}
