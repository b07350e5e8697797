/** Workspace memberships: granted inside a caller's transaction, announced after it, read for user views. */
import type { AdminEventMap, AdminEventResults, AdminEvents } from '@gateway/admin-kit';
import { and, asc, eq, Errors, inArray, type TransactionHelpers } from '@gateway/sdk';
import type { Reader, WorkspaceRow } from './find.ts';
import { higherRole } from './input.ts';
import type { UserWorkspaceView } from './present.ts';
import { workspaceMembers, workspaces, type WorkspaceRole } from './tables.ts';

export interface Grant {
  workspace: WorkspaceRow;
  role: WorkspaceRole;
  /** The body field it came from, for a 409 that names it. */
  param?: string;
}

export interface Granted {
  workspaceId: string;
  role: WorkspaceRole;
  /** False when the user was already a member (their role may have been raised). */
  added: boolean;
}

/**
 * Makes the user a member of each workspace. An existing membership is a 409 (`onExisting: 'conflict'`) or keeps
 * the higher of its role and the granted one (`'keep-higher'`, for invitations).
 */
export async function grantMemberships(
  tx: Pick<TransactionHelpers, 'select' | 'insert' | 'update'>,
  organisationId: string,
  userId: string,
  grants: readonly Grant[],
  onExisting: 'conflict' | 'keep-higher',
): Promise<Granted[]> {
  if (grants.length === 0) return [];
  const ids = grants.map((g) => g.workspace.id);
  const existing = new Map(
    (await tx.select(workspaceMembers, { where: (c) => and(eq(c.user_id, userId), inArray(c.workspace_id, ids)) })).map((m) => [m.workspace_id, m]),
  );
  const now = Date.now();
  const out: Granted[] = [];
  for (const grant of grants) {
    const current = existing.get(grant.workspace.id);
    if (!current) {
      await tx.insert(workspaceMembers, { organisation_id: organisationId, workspace_id: grant.workspace.id, user_id: userId, role: grant.role, created_at: now });
      out.push({ workspaceId: grant.workspace.id, role: grant.role, added: true });
      continue;
    }
    if (onExisting === 'conflict')
      throw Errors.conflict(`The user is already a member of workspace ${grant.workspace.slug}`, grant.param ?? null);
    const role = higherRole(current.role, grant.role);
    if (role !== current.role) await tx.update(workspaceMembers, { role, updated_at: now }, (c) => eq(c.id, current.id));
    out.push({ workspaceId: grant.workspace.id, role, added: false });
  }
  return out;
}

export type IssuedKey = NonNullable<AdminEventResults['member.added']['api_key']>;

/**
 * Emits `member.added` for each new membership (after the transaction committed) and gathers what listeners gave
 * back: the keys made for the new members. `callerUserId` is the user the answer goes to: a key's secret is in it
 * only when that is the key's user (otherwise the key waits for its user, `pending_secret`).
 */
export async function announceAdded(
  events: AdminEvents,
  organisationId: string,
  userId: string,
  granted: readonly Granted[],
  via: AdminEventMap['member.added']['via'],
  callerUserId: string | null,
): Promise<IssuedKey[]> {
  const keys: IssuedKey[] = [];
  for (const g of granted) {
    if (!g.added) continue;
    const results = await events.emit('member.added', { organisationId, workspaceId: g.workspaceId, userId, role: g.role, via, callerUserId });
    for (const result of results) if (result.api_key) keys.push(result.api_key);
  }
  return keys;
}

/** Each user's memberships with their workspace, in workspace creation order. */
export async function membershipsOf(database: Reader, organisationId: string, userIds: readonly string[]): Promise<Map<string, UserWorkspaceView[]>> {
  const out = new Map<string, UserWorkspaceView[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const members = await database.select(workspaceMembers, {
    where: (c) => and(eq(c.organisation_id, organisationId), inArray(c.user_id, [...userIds])),
    fresh: true,
  });
  if (members.length === 0) return out;
  const spaces = await database.select(workspaces, {
    where: (c) => inArray(c.id, [...new Set(members.map((m) => m.workspace_id))]),
    orderBy: (c) => [asc(c.created_at), asc(c.id)],
    fresh: true,
  });
  const order = new Map(spaces.map((w, i) => [w.id, i]));
  const byId = new Map(spaces.map((w) => [w.id, w]));
  members.sort((a, b) => (order.get(a.workspace_id) ?? 0) - (order.get(b.workspace_id) ?? 0));
  for (const m of members) {
    const w = byId.get(m.workspace_id);
    if (w) out.get(m.user_id)?.push({ id: w.id, slug: w.slug, name: w.name, status: w.status, role: m.role });
  }
  return out;
}
