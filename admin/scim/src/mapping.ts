/**
 * POST /v1/scim/workspaces: maps a SCIM group to a workspace and a role. `workspace_id` and `role` (admin, manager,
 * member; case-insensitive) and exactly one of `scim_group_id` / `scim_group_name` (an unknown name creates the
 * group); anything else is a 400. The group's current members become members of the workspace at once.
 */
import { findWorkspace, requireActive, WORKSPACE_ROLES, type WorkspaceRole } from '@gateway/admin-identity';
import { type AdminRequest, and, type Database, eq, Errors } from '@gateway/sdk';
import type { AdminEvents } from '@gateway/admin-kit';
import { insertGroup } from './groups.ts';
import { grantWorkspace, memberIds, removeMembers } from './memberships.ts';
import { ScimError } from './scim-errors.ts';
import { scimGroups } from './tables.ts';

const FIELDS = new Set(['workspace_id', 'role', 'scim_group_id', 'scim_group_name']);

export async function mapGroupToWorkspace(database: Database, events: AdminEvents | undefined, req: AdminRequest): Promise<Response> {
  const body = req.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw Errors.badRequest('The body must be a JSON object');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown) throw Errors.badRequest(`Unknown field ${unknown}`, unknown);
  const { workspace_id, role, scim_group_id, scim_group_name } = body;
  if (typeof workspace_id !== 'string' || workspace_id === '') throw Errors.badRequest('workspace_id is required', 'workspace_id');
  if (typeof role !== 'string' || role === '') throw Errors.badRequest('role is required', 'role');
  const wanted = role.trim().toLowerCase();
  if (!(WORKSPACE_ROLES as readonly string[]).includes(wanted)) throw Errors.badRequest(`role must be one of ${WORKSPACE_ROLES.join(', ')}`, 'role');
  const byId = scim_group_id !== undefined && scim_group_id !== null;
  const byName = scim_group_name !== undefined && scim_group_name !== null;
  if (byId === byName) throw Errors.badRequest('Give exactly one of scim_group_id and scim_group_name', byId ? 'scim_group_name' : 'scim_group_id');
  if (byId && (typeof scim_group_id !== 'string' || scim_group_id === '')) throw Errors.badRequest('scim_group_id must be a string', 'scim_group_id');
  if (byName && (typeof scim_group_name !== 'string' || scim_group_name.trim() === '' || scim_group_name.length > 255))
    throw Errors.badRequest('scim_group_name must be a non-empty string of at most 255 characters', 'scim_group_name');
  const organisationId = req.caller.organisationId;
  const workspace = await findWorkspace(database, organisationId, workspace_id, { param: 'workspace_id' });
  requireActive(workspace);

  let [group] = await database.select(scimGroups, {
    where: (c) =>
      and(eq(c.organisation_id, organisationId), byId ? eq(c.id, scim_group_id as string) : eq(c.display_name, (scim_group_name as string).trim())),
    limit: 1,
    fresh: true,
  });
  if (!group && byId) throw Errors.notFound('No such SCIM group: scim_group_id');
  let created = false;
  if (!group) {
    try {
      group = await insertGroup({ database, organisationId }, (scim_group_name as string).trim(), null);
    } catch (error) {
      if (error instanceof ScimError) throw Errors.conflict(error.detail, 'scim_group_name');
      throw error;
    }
    created = true;
  }
  const deps = { database, events };
  const members = await memberIds(database, group.id);
  // A group moved to another workspace: its members leave the old one first (their keys there go with it).
  if (group.workspace_id && group.workspace_id !== workspace.id) await removeMembers(deps, group, members);
  await database.update(scimGroups, { workspace_id: workspace.id, role: wanted as WorkspaceRole, updated_at: Date.now() }, (c) => eq(c.id, group.id));
  const mapped = { ...group, workspace_id: workspace.id, role: wanted as WorkspaceRole };
  for (const userId of members) await grantWorkspace(deps, mapped, userId);
  req.audit = { resource: 'scim_workspace_mapping', resourceId: group.id, action: created ? 'create' : 'update', workspaceId: workspace.id, after: { role: wanted } };
  return Response.json(
    { object: 'scim_workspace_mapping', scim_group_id: group.id, scim_group_name: group.display_name, workspace_id: workspace.id, role: wanted, created_group: created },
    { status: created ? 201 : 200 },
  );
}
