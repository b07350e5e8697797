/**
 * Service `adminAuthorizer`: the roles an administration call acts with (core/sdk Principal). Read fresh from the
 * writer on every call, so a role change or a removed user counts from the next request.
 *
 * - organisation-service key: organisation admin; admin of every workspace of its organisation.
 * - workspace-service key: no organisation role; admin of its own workspace while it is active.
 * - workspace-user key: its user's organisation role; owners and admins are admin of every workspace, others have
 *   the role of their membership in active workspaces. A key whose user was removed is refused (401).
 * Workspaces of another organisation give null, always.
 */
import { and, type AdminAuthorizer, type Caller, type Database, eq, Errors, type Principal, type Role } from '@gateway/sdk';
import { lookupWorkspace, type WorkspaceRow } from './find.ts';
import { users, workspaceMembers } from './tables.ts';

export class IdentityAuthorizer implements AdminAuthorizer {
  constructor(private readonly database: Database) {}

  async principal(caller: Caller): Promise<Principal> {
    // One request asks about few workspaces, often the same one twice (route check, then handler).
    const seen = new Map<string, Promise<Role | null>>();
    const memo = (ask: (workspace: WorkspaceRow) => Promise<Role | null> | Role | null) => (idOrSlug: string) => {
      let role = seen.get(idOrSlug);
      if (!role) {
        role = lookupWorkspace(this.database, caller.organisationId, idOrSlug, { fresh: true }).then((w) => (w ? ask(w) : null));
        seen.set(idOrSlug, role);
      }
      return role;
    };

    if (caller.keyType === 'organisation-service')
      return { caller, orgRole: 'admin', isOrgAdmin: true, workspaceRole: memo(() => 'admin') };

    if (caller.keyType === 'workspace-service')
      return {
        caller,
        orgRole: null,
        isOrgAdmin: false,
        workspaceRole: memo((w) => (w.id === caller.workspaceId && w.status === 'active' ? 'admin' : null)),
      };

    const [user] = caller.userId
      ? await this.database.select(users, {
          where: (c) => and(eq(c.organisation_id, caller.organisationId), eq(c.id, caller.userId ?? '')),
          limit: 1,
          fresh: true,
        })
      : [];
    if (!user) throw Errors.unauthorized('The user of this API key is no longer a member of the organisation');
    const isOrgAdmin = user.role === 'owner' || user.role === 'admin';
    return {
      caller,
      orgRole: user.role,
      isOrgAdmin,
      workspaceRole: memo(async (w) => {
        if (isOrgAdmin) return 'admin';
        if (w.status !== 'active') return null;
        const [member] = await this.database.select(workspaceMembers, {
          where: (c) => and(eq(c.workspace_id, w.id), eq(c.user_id, user.id)),
          limit: 1,
          fresh: true,
        });
        return member?.role ?? null;
      }),
    };
  }
}
