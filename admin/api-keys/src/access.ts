/**
 * Who may do what to a key. Organisation owners and admins (and organisation-service keys) manage every key;
 * workspace admins (and a workspace-service key in its own workspace) manage the workspace keys of their workspace;
 * a user reads, and with a rotation scope rotates, their own workspace-user keys. Scopes are checked besides: the
 * route's, and for a rotation the scope of the key's type. Another user's workspace-user key acts as that user, so
 * making, changing, rotating or deleting one needs every role the user holds; its waiting secret is the user's alone.
 */
import { users, workspaceMembers } from '@gateway/admin-identity';
import { and, eq, type Database, Errors, type Principal, roleAtLeast } from '@gateway/sdk';
import { mayRotate } from './scopes.ts';
import { apiKeys, type ApiKeyRow } from './tables.ts';

type KeyRef = Pick<ApiKeyRow, 'type' | 'workspace_id' | 'user_id'>;

export async function canManage(principal: Principal, key: KeyRef): Promise<boolean> {
  if (principal.isOrgAdmin) return true;
  if (key.type === 'organisation-service' || key.workspace_id === null) return false;
  return (await principal.workspaceRole(key.workspace_id)) === 'admin';
}

export function isOwn(principal: Principal, key: KeyRef): boolean {
  const { userId } = principal.caller;
  return key.type === 'workspace-user' && userId !== null && key.user_id === userId;
}

/** 404 for a key the caller may not even see, 403 for one it sees but may not change. */
export async function requireManage(principal: Principal, key: KeyRef): Promise<void> {
  if (await canManage(principal, key)) return;
  if (isOwn(principal, key)) throw Errors.forbidden('Only an organisation or workspace admin may change this key');
  throw Errors.notFound('No such API key');
}

export async function requireRead(principal: Principal, key: KeyRef): Promise<void> {
  if (isOwn(principal, key) || (await canManage(principal, key))) return;
  throw Errors.notFound('No such API key');
}

/** Rotating (and picking up a rotated secret): the rotation scope of the key's type, and admin or owner of the key. */
export async function requireRotate(principal: Principal, key: KeyRef): Promise<void> {
  await requireRead(principal, key);
  if (!mayRotate(principal.caller.scopes, key.type))
    throw Errors.forbidden(`Rotating a ${key.type} key needs the api_keys.rotate or ${key.type.replaceAll('-', '_')}_api_keys.rotate scope`);
  if (!isOwn(principal, key) && !(await canManage(principal, key))) throw Errors.forbidden('Only an admin or the key owner may rotate this key');
}

/**
 * A workspace-user key carries its user's roles: making one, or taking a secret of it, hands the caller those roles.
 * So the caller must hold the user's organisation role itself: an owner's key is an owner's business, an
 * organisation admin's key needs an organisation admin (an organisation-service key acts as one).
 */
export function requireHoldsRole(principal: Principal, userRole: string): void {
  if (userRole === 'owner' && principal.orgRole !== 'owner') throw Errors.forbidden("Only an owner may make an owner's key or take its secret");
  if (userRole === 'admin' && !principal.isOrgAdmin) throw Errors.forbidden("Only an organisation owner or admin may make an admin's key or take its secret");
}

/**
 * requireHoldsRole, and the user's role in each of their workspaces: a workspace-user key acts with its user's
 * memberships everywhere, not only in the workspace it belongs to, so whoever makes one or takes its secret must
 * hold at least each of those roles (archived workspaces count: they may be restored). Organisation admins are
 * admin of every workspace.
 */
export async function requireHoldsUserRoles(database: Database, principal: Principal, user: { id: string; role: string }): Promise<void> {
  requireHoldsRole(principal, user.role);
  if (principal.isOrgAdmin) return;
  const memberships = await database.select(workspaceMembers, { where: (c) => eq(c.user_id, user.id), fresh: true });
  for (const m of memberships)
    if (!roleAtLeast(await principal.workspaceRole(m.workspace_id), m.role))
      throw Errors.forbidden(`A key of this user acts with their ${m.role} role in workspace ${m.workspace_id}, a role this caller does not hold there`);
}

/**
 * requireHoldsUserRoles for a new key of `user`, with one exception: an owner who holds no key at all may be given
 * a first one by an organisation admin (the bootstrap key gives the first owner theirs). Admins cannot empty an
 * owner's keys to use it: changing or deleting an owner's key needs an owner.
 */
export async function requireMayMakeKeyFor(database: Database, principal: Principal, user: { id: string; role: string }): Promise<void> {
  if (user.role === 'owner' && principal.orgRole !== 'owner' && principal.isOrgAdmin) {
    const held = await database.count(apiKeys, (c) => and(eq(c.user_id, user.id), eq(c.type, 'workspace-user')), { fresh: true });
    if (held === 0) return;
  }
  await requireHoldsUserRoles(database, principal, user);
}

/** requireHoldsUserRoles for an existing key: its user's current roles (one's own key needs nothing more). */
export async function requireHoldsKeyRole(database: Database, principal: Principal, key: KeyRef): Promise<void> {
  if (key.type !== 'workspace-user' || key.user_id === null || isOwn(principal, key)) return;
  const user = await database.findOne(users, 'id', key.user_id, { fresh: true });
  await requireHoldsUserRoles(database, principal, { id: key.user_id, role: user?.role ?? 'member' });
}

/**
 * A secret waiting in a workspace-user key (its default key made when it joined a workspace, or a scheduled
 * rotation's) was shown to nobody: it is its user's to pick up, no one else's.
 */
export function requireOwnPickup(principal: Principal, key: KeyRef): void {
  if (key.type === 'workspace-user' && !isOwn(principal, key)) throw Errors.forbidden("Only the key's user may pick up the waiting secret of a workspace-user key");
}

/**
 * The workspaces in which the caller is admin, among those it could be: its key's workspace and its user's
 * memberships (an organisation admin is admin everywhere and needs no list).
 */
export async function adminWorkspaces(database: Database, principal: Principal): Promise<string[]> {
  const { caller } = principal;
  const candidates = new Set<string>([caller.workspaceId]);
  if (caller.userId) {
    const userId = caller.userId;
    const rows = await database.select(workspaceMembers, {
      where: (c) => and(eq(c.organisation_id, caller.organisationId), eq(c.user_id, userId)),
    });
    for (const row of rows) candidates.add(row.workspace_id);
  }
  const admin: string[] = [];
  for (const id of candidates) if (id && (await principal.workspaceRole(id)) === 'admin') admin.push(id);
  return admin;
}
