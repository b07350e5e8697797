/**
 * /Groups: SCIM groups of the organisation and their members. A group mapped to a workspace (POST /scim/workspaces)
 * makes its members members of that workspace. With SCIM_MEMBERSHIP_USER_MODE=ON, member operations of a Groups
 * PATCH are skipped (membership is managed through /Users).
 */
import { isUniqueViolation } from '@gateway/admin-kit';
import { users } from '@gateway/admin-identity';
import { and, asc, eq, inArray, type Where } from '@gateway/sdk';
import { pageOf, parseFilter } from './filter.ts';
import { addMembers, memberIds, removeMembers, setMembers } from './memberships.ts';
import { idsOf, type PatchOp, parsePatch } from './patch.ts';
import { badValue, notFound, ScimError, scimJson } from './scim-errors.ts';
import { scimGroupMembers, scimGroups, scimUsers } from './tables.ts';
import { LIST_SCHEMA, type ScimContext } from './users.ts';

export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

type GroupRow = Awaited<ReturnType<typeof loadGroup>>;

async function loadGroup(ctx: ScimContext, id: string) {
  const [row] = await ctx.database.select(scimGroups, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.id, id)), limit: 1, fresh: true });
  if (!row) throw notFound(`Group ${id}`);
  return row;
}

/** The organisation's SCIM users among `ids`; 400 naming one that is not. */
async function checkUsers(ctx: ScimContext, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const unique = [...new Set(ids)];
  const found = new Set(
    (await ctx.database.select(scimUsers, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), inArray(c.id, unique)), fresh: true })).map((r) => r.id),
  );
  const missing = unique.find((id) => !found.has(id));
  if (missing) throw badValue(`No such user: ${missing}`);
  return unique;
}

async function present(ctx: ScimContext, group: GroupRow, withMembers: boolean): Promise<Record<string, unknown>> {
  let members: { value: string; display: string; $ref: string }[] | undefined;
  if (withMembers) {
    const ids = await memberIds(ctx.database, group.id);
    const people = ids.length ? await ctx.database.select(users, { where: (c) => inArray(c.id, ids), fresh: true }) : [];
    members = people.map((p) => ({ value: p.id, display: p.email, $ref: `${ctx.base}/Users/${p.id}` }));
  }
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    displayName: group.display_name,
    ...(group.external_id ? { externalId: group.external_id } : {}),
    ...(members ? { members } : {}),
    meta: {
      resourceType: 'Group',
      created: new Date(group.created_at).toISOString(),
      lastModified: new Date(group.updated_at).toISOString(),
      location: `${ctx.base}/Groups/${group.id}`,
    },
  };
}

/** Entra asks `excludedAttributes=members` on its reads; a list of thousands of members is then not loaded. */
const wantsMembers = (query: URLSearchParams) => !/(^|,)\s*members\s*(,|$)/i.test(query.get('excludedAttributes') ?? '');

function displayNameOf(body: unknown): string {
  const name = (body as { displayName?: unknown } | undefined)?.displayName;
  if (typeof name !== 'string' || name.trim() === '') throw badValue('displayName is required');
  if (name.length > 255) throw badValue('displayName is longer than 255 characters');
  return name.trim();
}

const externalIdOf = (body: unknown): string | null => {
  const v = (body as { externalId?: unknown } | undefined)?.externalId;
  return typeof v === 'string' && v !== '' ? v : null;
};

/** Creates a group row; a taken displayName is a 409 uniqueness. Shared with the workspace mapping. */
export async function insertGroup(ctx: Pick<ScimContext, 'database' | 'organisationId'>, displayName: string, externalId: string | null): Promise<GroupRow> {
  const now = Date.now();
  const id = crypto.randomUUID();
  try {
    await ctx.database.insert(scimGroups, { id, organisation_id: ctx.organisationId, display_name: displayName, external_id: externalId, created_at: now, updated_at: now });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ScimError(409, `A group named ${displayName} already exists`, 'uniqueness');
    throw error;
  }
  const [row] = await ctx.database.select(scimGroups, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
  return row as GroupRow;
}

export async function createGroup(ctx: ScimContext, body: unknown): Promise<Response> {
  const group = await insertGroup(ctx, displayNameOf(body), externalIdOf(body));
  const members = (body as { members?: unknown }).members;
  if (members !== undefined && !ctx.membershipUserMode) await addMembers(ctx, group, await checkUsers(ctx, idsOf(members)));
  return scimJson(await present(ctx, group, true), 201);
}

export async function getGroup(ctx: ScimContext, id: string, query: URLSearchParams): Promise<Response> {
  return scimJson(await present(ctx, await loadGroup(ctx, id), wantsMembers(query)));
}

export async function listGroups(ctx: ScimContext, query: URLSearchParams): Promise<Response> {
  const filter = parseFilter(query.get('filter'));
  if (filter?.attribute === 'username') throw new ScimError(400, 'Groups have no userName: filter by displayName or externalId', 'invalidFilter');
  const { startIndex, count } = pageOf(query);
  const where: Where<(typeof scimGroups)['columns']> = (c) =>
    filter === undefined
      ? eq(c.organisation_id, ctx.organisationId)
      : and(eq(c.organisation_id, ctx.organisationId), filter.attribute === 'displayname' ? eq(c.display_name, filter.value) : eq(c.external_id, filter.value));
  const total = await ctx.database.count(scimGroups, where, { fresh: true });
  const rows =
    count === 0
      ? []
      : await ctx.database.select(scimGroups, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], offset: startIndex - 1, limit: count, fresh: true });
  const withMembers = wantsMembers(query);
  const resources = await Promise.all(rows.map((g) => present(ctx, g, withMembers)));
  return scimJson({ schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources });
}

async function rename(ctx: ScimContext, group: GroupRow, displayName: string | undefined, externalId: string | null | undefined): Promise<void> {
  const values: { display_name?: string; external_id?: string | null; updated_at: number } = { updated_at: Date.now() };
  if (displayName !== undefined) values.display_name = displayName;
  if (externalId !== undefined) values.external_id = externalId;
  try {
    await ctx.database.update(scimGroups, values, (c) => eq(c.id, group.id));
  } catch (error) {
    if (isUniqueViolation(error)) throw new ScimError(409, `A group named ${displayName} already exists`, 'uniqueness');
    throw error;
  }
}

export async function replaceGroup(ctx: ScimContext, id: string, body: unknown): Promise<Response> {
  const group = await loadGroup(ctx, id);
  await rename(ctx, group, displayNameOf(body), externalIdOf(body));
  const members = (body as { members?: unknown }).members;
  if (!ctx.membershipUserMode) await setMembers(ctx, group, await checkUsers(ctx, idsOf(members)));
  return scimJson(await present(ctx, await loadGroup(ctx, id), true));
}

async function applyMemberOp(ctx: ScimContext, group: GroupRow, op: PatchOp): Promise<void> {
  // Membership mode: /Users manages membership; the group's member operations are skipped, not refused, so that an
  // identity provider that sends both does not stop.
  if (ctx.membershipUserMode) return;
  if (op.op === 'remove') {
    if (op.filterValue !== undefined) return removeMembers(ctx, group, [op.filterValue]);
    if (op.value === undefined) return removeMembers(ctx, group, await memberIds(ctx.database, group.id));
    return removeMembers(ctx, group, idsOf(op.value));
  }
  const ids = await checkUsers(ctx, idsOf(op.value));
  return op.op === 'add' ? addMembers(ctx, group, ids) : setMembers(ctx, group, ids);
}

export async function patchGroup(ctx: ScimContext, id: string, body: unknown, query: URLSearchParams): Promise<Response> {
  const ops = parsePatch(body);
  const group = await loadGroup(ctx, id);
  for (const op of ops) {
    if (op.path === 'members') {
      await applyMemberOp(ctx, group, op);
      continue;
    }
    // Without a path: `{"displayName": …, "externalId": …, "members": […]}` (Entra's rename, some clients' members).
    const values: Record<string, unknown> =
      op.path === undefined ? ((op.value ?? {}) as Record<string, unknown>) : { [op.path]: op.op === 'remove' ? null : op.value };
    for (const [key, value] of Object.entries(values)) {
      const attribute = key.toLowerCase();
      if (attribute === 'displayname') {
        if (typeof value !== 'string' || value.trim() === '') throw badValue('displayName must be a non-empty string');
        await rename(ctx, group, value.trim(), undefined);
      } else if (attribute === 'externalid') await rename(ctx, group, undefined, typeof value === 'string' && value !== '' ? value : null);
      else if (attribute === 'members') await applyMemberOp(ctx, group, { op: op.op, path: 'members', value });
      else if (attribute !== 'id' && attribute !== 'schemas') throw new ScimError(400, `Unknown group attribute ${key}`, 'invalidPath');
    }
  }
  // Entra and Okta do not read the answer of a members PATCH; 200 with the group (without members unless asked).
  return scimJson(await present(ctx, await loadGroup(ctx, id), query.get('attributes')?.toLowerCase().includes('members') ?? false));
}

export async function deleteGroup(ctx: ScimContext, id: string): Promise<Response> {
  const group = await loadGroup(ctx, id);
  await removeMembers(ctx, group, await memberIds(ctx.database, group.id));
  await ctx.database.delete(scimGroupMembers, (c) => eq(c.group_id, id));
  await ctx.database.delete(scimGroups, (c) => eq(c.id, id));
  return new Response(null, { status: 204 });
}
