/**
 * /users: the people of the organisation. Organisation owners and admins manage them; only an owner makes, changes
 * or removes an owner, and the last owner stays.
 */
import { conflictOnUnique, csv, json, list, noContent, page, requireOrgAdmin, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, eq, Errors, inArray, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { findUser, type UserRow } from '../find.ts';
import { parseEmail, parseOrganisationRole } from '../input.ts';
import { announceAdded, grantMemberships, membershipsOf } from '../memberships.ts';
import { userView } from '../present.ts';
import { users, workspaceMembers } from '../tables.ts';
import { countOwners, type IdentityDeps, nonBlank, requireMayGrantOwner, requireOwner, resolveGrants } from './shared.ts';

const WorkspaceRef = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), role: Type.Optional(Type.String()) }, { additionalProperties: false });
const checkCreate = validator(
  Type.Object(
    {
      email: Type.String({ minLength: 3, maxLength: 320 }),
      name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
      role: Type.Optional(Type.String()),
      workspaces: Type.Optional(Type.Array(WorkspaceRef, { maxItems: 1000 })),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    { role: Type.Optional(Type.String()), name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])) },
    { additionalProperties: false },
  ),
);

export function userRoutes(deps: IdentityDeps): AdminRoute[] {
  const { database, events } = deps;

  async function view(u: UserRow) {
    return userView(u, (await membershipsOf(database, u.organisation_id, [u.id])).get(u.id) ?? []);
  }

  async function listUsers(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const org = req.caller.organisationId;
    const email = req.query.get('email');
    const wantedEmail = email ? parseEmail(email, 'email') : undefined;
    const roles = csv(req.query, 'role')?.map((r) => parseOrganisationRole(r, 'role'));
    const { offset, limit } = page(req.query);
    const where: Where<typeof users.columns> = (c) =>
      and(eq(c.organisation_id, org), wantedEmail ? eq(c.email, wantedEmail) : undefined, roles?.length ? inArray(c.role, roles) : undefined);
    const [rows, total] = await Promise.all([
      database.select(users, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], offset, limit, fresh: true }),
      database.count(users, where, { fresh: true }),
    ]);
    const memberships = await membershipsOf(database, org, rows.map((u) => u.id));
    return list(rows.map((u) => userView(u, memberships.get(u.id) ?? [])), total);
  }

  async function getUser(req: AdminRequest): Promise<Response> {
    const user = await findUser(database, req.caller.organisationId, req.params.userId ?? '', { fresh: true });
    if (!req.principal.isOrgAdmin && req.caller.userId !== user.id)
      throw Errors.forbidden('Only organisation owners and admins see other users');
    return json(await view(user));
  }

  async function createUser(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const org = req.caller.organisationId;
    const body = checkCreate(req.body);
    const email = parseEmail(body.email, 'email');
    const role = parseOrganisationRole(body.role ?? 'member', 'role');
    const name = body.name == null ? null : nonBlank(body.name, 'name');
    const grants = await resolveGrants(database, org, body.workspaces ?? [], 'workspaces');
    if (role === 'owner') await requireMayGrantOwner(database, req.principal, 'role');
    const now = Date.now();
    const user: UserRow = { id: crypto.randomUUID(), organisation_id: org, email, name, role, created_at: now, updated_at: now };
    const exists = () => Errors.conflict(`A user with the e-mail ${email} exists`, 'email');
    const granted = await conflictOnUnique(
      () =>
        database.transaction(async (tx) => {
          const [existing] = await tx.select(users, { where: (c) => and(eq(c.organisation_id, org), eq(c.email, email)), limit: 1 });
          if (existing) throw exists();
          await tx.insert(users, user);
          return grantMemberships(tx, org, user.id, grants, 'conflict');
        }),
      exists,
    );
    const api_keys = await announceAdded(events, org, user.id, granted, 'direct', req.caller.userId);
    const shown = await view(user);
    req.audit = { resource: 'user', resourceId: user.id, action: 'create', after: shown };
    return json({ ...shown, api_keys }, 201);
  }

  async function updateUser(req: AdminRequest): Promise<Response> {
    const org = req.caller.organisationId;
    const user = await findUser(database, org, req.params.userId ?? '', { fresh: true });
    const body = checkUpdate(req.body);
    if (body.role === undefined && body.name === undefined) throw Errors.badRequest('Nothing to change: give role or name', 'body');
    const self = req.caller.userId === user.id;
    // Users may rename themselves; everything else is for organisation owners and admins.
    if (body.role !== undefined || !self) requireOrgAdmin(req.principal);
    const changes: Partial<UserRow> = { updated_at: Date.now() };
    if (body.name !== undefined) changes.name = body.name === null ? null : nonBlank(body.name, 'name');
    if (body.role !== undefined) {
      const role = parseOrganisationRole(body.role, 'role');
      if (role !== user.role) {
        if (user.role === 'owner') requireOwner(req.principal, 'change the role of an owner');
        if (role === 'owner') await requireMayGrantOwner(database, req.principal, 'role');
        changes.role = role;
      }
    }
    const before = await view(user);
    await database.transaction(async (tx) => {
      if (user.role === 'owner' && changes.role && (await countOwners(tx, org)) <= 1)
        throw Errors.badRequest('The last owner of the organisation cannot be demoted', 'role');
      await tx.update(users, changes, (c) => eq(c.id, user.id));
    });
    const shown = userView({ ...user, ...changes }, before.workspaces);
    req.audit = { resource: 'user', resourceId: user.id, action: 'update', before, after: shown };
    return json(shown);
  }

  async function removeUser(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const org = req.caller.organisationId;
    const user = await findUser(database, org, req.params.userId ?? '', { fresh: true });
    if (user.role === 'owner') requireOwner(req.principal, 'remove an owner');
    const before = await view(user);
    await database.transaction(async (tx) => {
      if (user.role === 'owner' && (await countOwners(tx, org)) <= 1)
        throw Errors.badRequest('The last owner of the organisation cannot be removed', null);
      await tx.delete(workspaceMembers, (c) => eq(c.user_id, user.id));
      await tx.delete(users, (c) => eq(c.id, user.id));
    });
    // workspaceId null: out of the organisation, so out of every workspace (listeners revoke the user's keys).
    await events.emit('member.removed', { organisationId: org, workspaceId: null, userId: user.id, via: 'direct' });
    req.audit = { resource: 'user', resourceId: user.id, action: 'delete', before };
    return noContent();
  }

  return [
    { method: 'GET', path: '/users', scope: 'users.read', role: 'admin', handle: listUsers },
    { method: 'POST', path: '/users', scope: 'users.write', role: 'admin', handle: createUser },
    { method: 'GET', path: '/users/:userId', scope: 'users.read', handle: getUser },
    { method: 'PUT', path: '/users/:userId', scope: 'users.write', handle: updateUser },
    { method: 'DELETE', path: '/users/:userId', scope: 'users.write', role: 'admin', handle: removeUser },
  ];
}
