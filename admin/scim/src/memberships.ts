/**
 * Group membership and what it grants: a member of a group mapped to a workspace is a member of that workspace with
 * the mapping's role (announced as `member.added` via `scim`, so `user_api_key_auto_create` makes their key as for
 * any joining member); leaving the last mapped group of a workspace removes the workspace membership and, through
 * `member.removed`, the user's API keys of that workspace.
 */
import { type AdminEvents, isUniqueViolation } from '@gateway/admin-kit';
import { workspaceMembers } from '@gateway/admin-identity';
import { and, type Database, eq, inArray } from '@gateway/sdk';
import { scimGroupMembers, scimGroups } from './tables.ts';

export interface MembershipDeps {
  readonly database: Database;
  readonly events: AdminEvents | undefined;
}

type Group = { id: string; organisation_id: string; workspace_id: string | null; role: 'admin' | 'manager' | 'member' | null };

/** Makes `userId` a member of the group's workspace (when mapped); announces a new membership. */
export async function grantWorkspace(deps: MembershipDeps, group: Group, userId: string): Promise<void> {
  if (!group.workspace_id || !group.role) return;
  const [current] = await deps.database.select(workspaceMembers, {
    where: (c) => and(eq(c.workspace_id, group.workspace_id as string), eq(c.user_id, userId)),
    fresh: true,
  });
  if (current) {
    if (current.role !== group.role) await deps.database.update(workspaceMembers, { role: group.role, updated_at: Date.now() }, (c) => eq(c.id, current.id));
    return;
  }
  try {
    await deps.database.insert(workspaceMembers, { organisation_id: group.organisation_id, workspace_id: group.workspace_id, user_id: userId, role: group.role, created_at: Date.now() });
  } catch (error) {
    if (isUniqueViolation(error)) return; // added meanwhile by a concurrent request
    throw error;
  }
  await deps.events?.emit('member.added', {
    organisationId: group.organisation_id,
    workspaceId: group.workspace_id,
    userId,
    role: group.role,
    via: 'scim',
    callerUserId: null,
  });
}

/** Removes the workspace membership the group gave, unless another mapped group of that workspace still gives it. */
export async function revokeWorkspace(deps: MembershipDeps, group: Group, userId: string): Promise<void> {
  if (!group.workspace_id) return;
  const siblings = await deps.database.select(scimGroups, {
    where: (c) => and(eq(c.organisation_id, group.organisation_id), eq(c.workspace_id, group.workspace_id as string)),
    fresh: true,
  });
  const others = siblings.filter((g) => g.id !== group.id).map((g) => g.id);
  if (others.length > 0) {
    const still = await deps.database.count(scimGroupMembers, (c) => and(inArray(c.group_id, others), eq(c.user_id, userId)), { fresh: true });
    if (still > 0) return;
  }
  const removed = await deps.database.delete(workspaceMembers, (c) => and(eq(c.workspace_id, group.workspace_id as string), eq(c.user_id, userId)));
  if (removed > 0)
    await deps.events?.emit('member.removed', { organisationId: group.organisation_id, workspaceId: group.workspace_id, userId, via: 'scim' });
}

/** Adds users to a group (ids already checked to be the organisation's users). */
export async function addMembers(deps: MembershipDeps, group: Group, userIds: readonly string[]): Promise<void> {
  for (const userId of new Set(userIds)) {
    const inserted = await deps.database.insert(
      scimGroupMembers,
      { organisation_id: group.organisation_id, group_id: group.id, user_id: userId },
      { ignoreDuplicates: true },
    );
    if (inserted > 0) await grantWorkspace(deps, group, userId);
  }
}

export async function removeMembers(deps: MembershipDeps, group: Group, userIds: readonly string[]): Promise<void> {
  for (const userId of new Set(userIds)) {
    const removed = await deps.database.delete(scimGroupMembers, (c) => and(eq(c.group_id, group.id), eq(c.user_id, userId)));
    if (removed > 0) await revokeWorkspace(deps, group, userId);
  }
}

/** The group's member ids. */
export async function memberIds(database: Database, groupId: string): Promise<string[]> {
  return (await database.select(scimGroupMembers, { where: (c) => eq(c.group_id, groupId), fresh: true })).map((m) => m.user_id);
}

/** Sets the group's members to exactly `userIds`. */
export async function setMembers(deps: MembershipDeps, group: Group, userIds: readonly string[]): Promise<void> {
  const current = new Set(await memberIds(deps.database, group.id));
  const wanted = new Set(userIds);
  await removeMembers(deps, group, [...current].filter((id) => !wanted.has(id)));
  await addMembers(deps, group, [...wanted].filter((id) => !current.has(id)));
}
