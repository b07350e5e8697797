/** /workspaces: list, create, read, update (archive), delete. */
import { conflictOnUnique, csv, isUniqueViolation, json, list, noContent, page, requireOrgAdmin, requireWorkspaceRole, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, eq, Errors, inArray, ne, type TransactionHelpers, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { findWorkspace, lookupUser, type WorkspaceRow } from '../find.ts';
import { parseWorkspaceRole } from '../input.ts';
import { announceAdded, grantMemberships, type Grant, type IssuedKey } from '../memberships.ts';
import { workspaceView } from '../present.ts';
import { checkSlug, freeSlug, slugFromName } from '../slug.ts';
import { type WorkspaceDefaults, workspaceMembers, workspaces, WORKSPACE_STATUSES, type WorkspaceStatus } from '../tables.ts';
import { type IdentityDeps, nonBlank, refuseDuplicates, requireMayAddMember } from './shared.ts';

const Defaults = Type.Object(
  { metadata: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 16 })) },
  { additionalProperties: false },
);
const Description = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
const MemberRef = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), role: Type.Optional(Type.String()) }, { additionalProperties: false });

const checkCreate = validator(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      slug: Type.Optional(Type.String()),
      description: Type.Optional(Description),
      defaults: Type.Optional(Defaults),
      users: Type.Optional(Type.Array(MemberRef, { maxItems: 1000 })),
    },
    { additionalProperties: false },
  ),
);

const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      slug: Type.Optional(Type.String()),
      description: Type.Optional(Description),
      defaults: Type.Optional(Defaults),
      status: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
);

/** Metadata keys: 1-64 characters (the values' 512 and the 16 pairs are in the schema). */
function checkDefaults(defaults: WorkspaceDefaults | null | undefined): void {
  for (const key of Object.keys(defaults?.metadata ?? {}))
    if (key.length < 1 || key.length > 64) throw Errors.badRequest('defaults.metadata keys must be 1 to 64 characters', 'defaults.metadata');
}

function parseStatus(raw: string, param: string): WorkspaceStatus {
  const status = WORKSPACE_STATUSES.find((s) => s === raw.trim().toLowerCase());
  if (!status) throw Errors.badRequest(`${param} must be one of ${WORKSPACE_STATUSES.join(', ')}`, param);
  return status;
}

async function slugsOf(tx: Pick<TransactionHelpers, 'select'>, organisationId: string): Promise<Set<string>> {
  return new Set((await tx.select(workspaces, { where: (c) => eq(c.organisation_id, organisationId) })).map((w) => w.slug));
}

/** Another active workspace must remain: the organisation's keys act in one. */
async function requireAnotherActive(tx: Pick<TransactionHelpers, 'count'>, w: WorkspaceRow, what: string, param: string | null): Promise<void> {
  const others = await tx.count(workspaces, (c) => and(eq(c.organisation_id, w.organisation_id), eq(c.status, 'active'), ne(c.id, w.id)), { fresh: true });
  if (others === 0) throw Errors.badRequest(`The last active workspace of the organisation cannot be ${what}`, param);
}

export function workspaceRoutes(deps: IdentityDeps): AdminRoute[] {
  const { database, events } = deps;

  async function listWorkspaces(req: AdminRequest): Promise<Response> {
    const statuses = csv(req.query, 'status') ?? ['active'];
    if (statuses.length === 0) throw Errors.badRequest('status must list active and/or archived', 'status');
    const wanted = [...new Set(statuses.map((s) => parseStatus(s, 'status')))];
    if (wanted.includes('archived') && !req.principal.isOrgAdmin)
      throw Errors.forbidden('Only organisation owners and admins may list archived workspaces');
    const { offset, limit } = page(req.query);
    const org = req.caller.organisationId;
    let visible: string[] | undefined; // undefined: every workspace of the organisation
    if (!req.principal.isOrgAdmin) {
      if (req.caller.keyType === 'workspace-service') visible = [req.caller.workspaceId];
      else if (req.caller.userId) {
        const userId = req.caller.userId;
        visible = (await database.select(workspaceMembers, { where: (c) => eq(c.user_id, userId), fresh: true })).map((m) => m.workspace_id);
      } else visible = [];
    }
    if (visible?.length === 0) return list([], 0);
    const where: Where<typeof workspaces.columns> = (c) =>
      and(eq(c.organisation_id, org), inArray(c.status, wanted), visible ? inArray(c.id, visible) : undefined);
    const [rows, total] = await Promise.all([
      database.select(workspaces, { where, orderBy: (c) => [asc(c.created_at), asc(c.slug)], offset, limit, fresh: true }),
      database.count(workspaces, where, { fresh: true }),
    ]);
    return list(rows.map(workspaceView), total);
  }

  async function createWorkspace(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const body = checkCreate(req.body);
    const org = req.caller.organisationId;
    const name = nonBlank(body.name, 'name');
    const givenSlug = body.slug === undefined ? undefined : checkSlug(body.slug);
    checkDefaults(body.defaults);
    const members: { userId: string; role: Grant['role'] }[] = [];
    for (const [i, ref] of (body.users ?? []).entries()) {
      const role = parseWorkspaceRole(ref.role ?? 'member', `users[${i}].role`);
      const user = await lookupUser(database, org, ref.id, { fresh: true });
      if (!user) throw Errors.badRequest(`users[${i}].id: no user ${JSON.stringify(ref.id)} in the organisation`, `users[${i}].id`);
      requireMayAddMember(req.principal, user, `users[${i}].id`);
      members.push({ userId: user.id, role });
    }
    refuseDuplicates(members.map((m) => m.userId), (i) => `users[${i}].id`);

    const insert = () =>
      database.transaction(async (tx) => {
        const taken = await slugsOf(tx, org);
        if (givenSlug && taken.has(givenSlug)) throw Errors.conflict(`The slug ${givenSlug} is taken in this organisation`, 'slug');
        const now = Date.now();
        const row: WorkspaceRow = {
          id: crypto.randomUUID(),
          organisation_id: org,
          name,
          slug: givenSlug ?? freeSlug(slugFromName(name), taken),
          status: 'active',
          description: body.description ?? null,
          defaults: body.defaults ?? null,
          created_at: now,
          updated_at: now,
          archived_at: null,
          last_reset_at: null,
        };
        await tx.insert(workspaces, row);
        for (const m of members) await grantMemberships(tx, org, m.userId, [{ workspace: row, role: m.role }], 'conflict');
        return row;
      });
    let created: WorkspaceRow | undefined;
    // A generated slug can lose a race with a concurrent create: pick the next free one and try again.
    for (let attempt = 0; created === undefined; attempt++) {
      try {
        created = await insert();
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (givenSlug || attempt >= 3) throw Errors.conflict('The slug is taken in this organisation', 'slug');
      }
    }
    if (body.defaults) await events.emit('workspace.defaults_changed', { organisationId: org, workspaceId: created.id });
    const api_keys: IssuedKey[] = [];
    for (const m of members)
      api_keys.push(...(await announceAdded(events, org, m.userId, [{ workspaceId: created.id, role: m.role, added: true }], 'direct', req.caller.userId)));
    const view = workspaceView(created);
    req.audit = { resource: 'workspace', resourceId: created.id, action: 'create', workspaceId: created.id, after: { ...view, users: members.map((m) => ({ user_id: m.userId, role: m.role })) } };
    return json({ ...view, api_keys }, 201);
  }

  async function getWorkspace(req: AdminRequest): Promise<Response> {
    const w = await findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '', { fresh: true });
    await requireWorkspaceRole(req.principal, w.id, 'member');
    return json(workspaceView(w));
  }

  async function updateWorkspace(req: AdminRequest): Promise<Response> {
    const w = await findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '', { fresh: true });
    await requireWorkspaceRole(req.principal, w.id, 'admin');
    const body = checkUpdate(req.body);
    if (Object.keys(body).length === 0) throw Errors.badRequest('Nothing to change: give name, slug, description, defaults or status', 'body');
    const changes: Partial<WorkspaceRow> = {};
    if (body.name !== undefined) changes.name = nonBlank(body.name, 'name');
    if (body.slug !== undefined && body.slug !== w.slug) changes.slug = checkSlug(body.slug);
    if (body.description !== undefined) changes.description = body.description;
    if (body.defaults !== undefined) {
      checkDefaults(body.defaults);
      changes.defaults = body.defaults;
    }
    const status = body.status === undefined ? undefined : parseStatus(body.status, 'status');
    if (status !== undefined && status !== w.status) {
      if (!req.principal.isOrgAdmin) throw Errors.forbidden('Archiving or restoring a workspace needs the organisation owner or admin role');
      changes.status = status;
      changes.archived_at = status === 'archived' ? Date.now() : null;
    }
    changes.updated_at = Date.now();
    const after = await conflictOnUnique(
      () =>
        database.transaction(async (tx) => {
          if (changes.slug && (await slugsOf(tx, w.organisation_id)).has(changes.slug))
            throw Errors.conflict(`The slug ${changes.slug} is taken in this organisation`, 'slug');
          if (changes.status === 'archived') await requireAnotherActive(tx, w, 'archived', 'status');
          await tx.update(workspaces, changes, (c) => eq(c.id, w.id));
          return { ...w, ...changes };
        }),
      () => Errors.conflict('The slug is taken in this organisation', 'slug'),
    );
    if (changes.defaults !== undefined) await events.emit('workspace.defaults_changed', { organisationId: w.organisation_id, workspaceId: w.id });
    if (changes.status === 'archived') await events.emit('workspace.archived', { organisationId: w.organisation_id, workspaceId: w.id });
    const action = changes.status === 'archived' ? 'archive' : changes.status === 'active' ? 'restore' : 'update';
    req.audit = { resource: 'workspace', resourceId: w.id, action, workspaceId: w.id, before: workspaceView(w), after: workspaceView(after) };
    return json(workspaceView(after));
  }

  async function deleteWorkspace(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const w = await findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '', { fresh: true });
    const members = await database.transaction(async (tx) => {
      if (w.status === 'active') await requireAnotherActive(tx, w, 'deleted', null);
      const rows = await tx.select(workspaceMembers, { where: (c) => eq(c.workspace_id, w.id) });
      await tx.delete(workspaceMembers, (c) => eq(c.workspace_id, w.id));
      await tx.delete(workspaces, (c) => eq(c.id, w.id));
      return rows;
    });
    // Listeners drop what belonged to the workspace's members and to the workspace (its keys).
    for (const m of members)
      await events.emit('member.removed', { organisationId: w.organisation_id, workspaceId: w.id, userId: m.user_id, via: 'direct' });
    if (w.status === 'active') await events.emit('workspace.archived', { organisationId: w.organisation_id, workspaceId: w.id });
    req.audit = {
      resource: 'workspace',
      resourceId: w.id,
      action: 'delete',
      workspaceId: w.id,
      before: { ...workspaceView(w), users: members.map((m) => ({ user_id: m.user_id, role: m.role })) },
    };
    return noContent();
  }

  return [
    { method: 'GET', path: '/workspaces', scope: 'workspaces.read', handle: listWorkspaces },
    { method: 'POST', path: '/workspaces', scope: 'workspaces.write', handle: createWorkspace },
    { method: 'GET', path: '/workspaces/:workspaceId', scope: 'workspaces.read', handle: getWorkspace },
    { method: 'PUT', path: '/workspaces/:workspaceId', scope: 'workspaces.write', handle: updateWorkspace },
    { method: 'DELETE', path: '/workspaces/:workspaceId', scope: 'workspaces.delete', handle: deleteWorkspace },
  ];
}
