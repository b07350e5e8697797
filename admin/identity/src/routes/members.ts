/**
 * /workspaces/:workspaceId/users: the members of a workspace. Workspace admins (and organisation owners and admins)
 * manage every member; managers manage members and managers but neither grant the admin role nor touch an admin.
 */
import { csv, json, list, noContent, page, requireWorkspaceRole, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, eq, Errors, inArray, type Role, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { findUser, findWorkspace, lookupUser, type UserRow, type WorkspaceRow } from '../find.ts';
import { parseWorkspaceRole } from '../input.ts';
import { announceAdded, grantMemberships, type IssuedKey } from '../memberships.ts';
import { memberView } from '../present.ts';
import { users, workspaceMembers, type WorkspaceRole } from '../tables.ts';
import { type IdentityDeps, refuseDuplicates, requireMayAddMember } from './shared.ts';

const Ref = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), role: Type.Optional(Type.String()) }, { additionalProperties: false });
const checkAdd = validator(
  Type.Object(
    {
      users: Type.Optional(Type.Array(Ref, { minItems: 1, maxItems: 1000 })),
      user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      role: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(Type.Object({ role: Type.String() }, { additionalProperties: false }));

/** A manager may neither grant admin nor change an admin. */
function requireMayHandle(callerRole: Role, targetRole: WorkspaceRole | undefined, newRole: WorkspaceRole | undefined): void {
  if (callerRole !== 'manager') return;
  if (newRole === 'admin') throw Errors.forbidden('A workspace manager cannot grant the admin role');
  if (targetRole === 'admin') throw Errors.forbidden('A workspace manager cannot change or remove a workspace admin');
}

export function memberRoutes(deps: IdentityDeps): AdminRoute[] {
  const { database, events } = deps;

  async function workspaceOf(req: AdminRequest, least: Role): Promise<{ w: WorkspaceRow; role: Role }> {
    const w = await findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '', { fresh: true });
    return { w, role: await requireWorkspaceRole(req.principal, w.id, least) };
  }

  async function memberOf(w: WorkspaceRow, userId: string) {
    const [m] = await database.select(workspaceMembers, { where: (c) => and(eq(c.workspace_id, w.id), eq(c.user_id, userId)), limit: 1, fresh: true });
    if (!m) throw Errors.notFound('No such member of the workspace');
    return m;
  }

  async function listMembers(req: AdminRequest): Promise<Response> {
    const { w } = await workspaceOf(req, 'member');
    const roles = csv(req.query, 'role')?.map((r) => parseWorkspaceRole(r, 'role'));
    const { offset, limit } = page(req.query);
    const where: Where<typeof workspaceMembers.columns> = (c) => and(eq(c.workspace_id, w.id), roles?.length ? inArray(c.role, roles) : undefined);
    const [rows, total] = await Promise.all([
      database.select(workspaceMembers, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], offset, limit, fresh: true }),
      database.count(workspaceMembers, where, { fresh: true }),
    ]);
    const people = rows.length
      ? new Map((await database.select(users, { where: (c) => inArray(c.id, rows.map((m) => m.user_id)), fresh: true })).map((u) => [u.id, u]))
      : new Map<string, UserRow>();
    const data = rows.flatMap((m) => {
      const u = people.get(m.user_id);
      return u ? [memberView(u, m)] : [];
    });
    return list(data, total);
  }

  async function addMembers(req: AdminRequest): Promise<Response> {
    const { w, role: callerRole } = await workspaceOf(req, 'manager');
    const body = checkAdd(req.body);
    if ((body.users === undefined) === (body.user_id === undefined)) throw Errors.badRequest('Give either users (a list) or user_id', 'users');
    if (body.users && body.role !== undefined) throw Errors.badRequest('role goes inside each entry of users', 'role');
    const refs = body.users ?? [{ id: body.user_id ?? '', role: body.role }];
    const field = (i: number, name: string) => (body.users ? `users[${i}].${name}` : name === 'id' ? 'user_id' : name);
    const wanted: { user: UserRow; role: WorkspaceRole; param: string }[] = [];
    for (const [i, ref] of refs.entries()) {
      const role = parseWorkspaceRole(ref.role ?? 'member', field(i, 'role'));
      const user = await lookupUser(database, w.organisation_id, ref.id, { fresh: true });
      if (!user) throw Errors.badRequest(`${field(i, 'id')}: no user ${JSON.stringify(ref.id)} in the organisation`, field(i, 'id'));
      requireMayHandle(callerRole, undefined, role);
      requireMayAddMember(req.principal, user, field(i, 'id'));
      wanted.push({ user, role, param: field(i, 'id') });
    }
    refuseDuplicates(wanted.map((x) => x.user.id), (i) => field(i, 'id'));
    await database.transaction(async (tx) => {
      for (const x of wanted) await grantMemberships(tx, w.organisation_id, x.user.id, [{ workspace: w, role: x.role, param: x.param }], 'conflict');
    });
    const api_keys: IssuedKey[] = [];
    const now = Date.now();
    for (const x of wanted)
      api_keys.push(...(await announceAdded(events, w.organisation_id, x.user.id, [{ workspaceId: w.id, role: x.role, added: true }], 'direct', req.caller.userId)));
    const data = wanted.map((x) => memberView(x.user, { role: x.role, created_at: now, updated_at: null }));
    req.audit = {
      resource: 'workspace_user',
      resourceId: wanted.map((x) => x.user.id).join(','),
      action: 'create',
      workspaceId: w.id,
      after: wanted.map((x) => ({ user_id: x.user.id, email: x.user.email, role: x.role })),
    };
    return json({ object: 'list', data, total: data.length, api_keys }, 201);
  }

  async function updateMember(req: AdminRequest): Promise<Response> {
    const { w, role: callerRole } = await workspaceOf(req, 'manager');
    const body = checkUpdate(req.body);
    const role = parseWorkspaceRole(body.role, 'role');
    const user = await findUser(database, w.organisation_id, req.params.userId ?? '', { fresh: true });
    const m = await memberOf(w, user.id);
    requireMayHandle(callerRole, m.role, role);
    const updated_at = Date.now();
    await database.update(workspaceMembers, { role, updated_at }, (c) => eq(c.id, m.id));
    req.audit = { resource: 'workspace_user', resourceId: user.id, action: 'update', workspaceId: w.id, before: { user_id: user.id, role: m.role }, after: { user_id: user.id, role } };
    return json(memberView(user, { ...m, role, updated_at }));
  }

  async function removeMember(req: AdminRequest): Promise<Response> {
    const { w, role: callerRole } = await workspaceOf(req, 'manager');
    const userId = req.params.userId ?? '';
    const m = await memberOf(w, userId);
    requireMayHandle(callerRole, m.role, undefined);
    await database.delete(workspaceMembers, (c) => eq(c.id, m.id));
    await events.emit('member.removed', { organisationId: w.organisation_id, workspaceId: w.id, userId, via: 'direct' });
    req.audit = { resource: 'workspace_user', resourceId: userId, action: 'delete', workspaceId: w.id, before: { user_id: userId, role: m.role } };
    return noContent();
  }

  return [
    { method: 'GET', path: '/workspaces/:workspaceId/users', scope: 'workspace_users.read', handle: listMembers },
    { method: 'POST', path: '/workspaces/:workspaceId/users', scope: 'workspace_users.write', handle: addMembers },
    { method: 'PUT', path: '/workspaces/:workspaceId/users/:userId', scope: 'workspace_users.write', handle: updateMember },
    { method: 'DELETE', path: '/workspaces/:workspaceId/users/:userId', scope: 'workspace_users.write', handle: removeMember },
  ];
}
