/**
 * /users/invites: invitations to join the organisation. The token is shown once at creation and stored as its
 * SHA-256; accepting it (a public route: the token is the credential of a new person) makes the user and grants the
 * invitation's workspaces. An invitation to the address of an existing user is accepted by that user only, with a
 * key of their own: the token, which the inviter holds too, proves nothing about who the existing user is.
 */
import { csv, isUniqueViolation, json, list, noContent, page, requireOrgAdmin, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, desc, eq, Errors, gt, inArray, lte, or, type PublicAdminRequest, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { UserRow } from '../find.ts';
import { higherRole, parseEmail, parseOrganisationRole } from '../input.ts';
import { announceAdded, grantMemberships, membershipsOf } from '../memberships.ts';
import { type InviteRow, type InviteStatus, inviteView, userView } from '../present.ts';
import { users, userInvites, workspaces } from '../tables.ts';
import { type IdentityDeps, nonBlank, requireMayGrantOwner, resolveGrants } from './shared.ts';

export const INVITE_TTL = { defaultSeconds: 7 * 24 * 3600, minSeconds: 300, maxSeconds: 30 * 24 * 3600 } as const;
const INVITE_STATUSES: readonly InviteStatus[] = ['pending', 'accepted', 'expired'];

const checkCreate = validator(
  Type.Object(
    {
      email: Type.String({ minLength: 3, maxLength: 320 }),
      role: Type.Optional(Type.String()),
      workspaces: Type.Optional(
        Type.Array(Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), role: Type.Optional(Type.String()) }, { additionalProperties: false }), {
          maxItems: 1000,
        }),
      ),
      expires_in: Type.Optional(Type.Integer({ minimum: INVITE_TTL.minSeconds, maximum: INVITE_TTL.maxSeconds })),
    },
    { additionalProperties: false },
  ),
);
const checkAccept = validator(
  Type.Object(
    { token: Type.String({ minLength: 1, maxLength: 512 }), name: Type.Optional(Type.String({ maxLength: 255 })) },
    { additionalProperties: false },
  ),
);

export function hashToken(token: string): string {
  return new Bun.CryptoHasher('sha256').update(token).digest('hex');
}

function newToken(): string {
  return `inv-${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
}

export function inviteRoutes(deps: IdentityDeps): AdminRoute[] {
  const { database, events } = deps;
  const clock = deps.now ?? Date.now;

  async function findInvite(req: AdminRequest): Promise<InviteRow> {
    const id = req.params.inviteId ?? '';
    const [row] = await database.select(userInvites, {
      where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.id, id)),
      limit: 1,
      fresh: true,
    });
    if (!row) throw Errors.notFound('No such invitation');
    return row;
  }

  async function createInvite(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const org = req.caller.organisationId;
    const body = checkCreate(req.body);
    const email = parseEmail(body.email, 'email');
    const role = parseOrganisationRole(body.role ?? 'member', 'role');
    const grants = await resolveGrants(database, org, body.workspaces ?? [], 'workspaces');
    if (role === 'owner') await requireMayGrantOwner(database, req.principal, 'role');
    const now = clock();
    const token = newToken();
    const row: InviteRow = {
      id: crypto.randomUUID(),
      organisation_id: org,
      email,
      role,
      workspaces: grants.map((g) => ({ workspace_id: g.workspace.id, role: g.role })),
      token_hash: hashToken(token),
      status: 'pending',
      expires_at: now + (body.expires_in ?? INVITE_TTL.defaultSeconds) * 1000,
      invited_by_key: req.caller.apiKeyId,
      invited_by_user: req.caller.userId,
      accepted_user_id: null,
      accepted_at: null,
      created_at: now,
    };
    await database.transaction(async (tx) => {
      const open = await tx.count(userInvites, (c) =>
        and(eq(c.organisation_id, org), eq(c.email, email), eq(c.status, 'pending'), gt(c.expires_at, now)),
      );
      if (open > 0) throw Errors.conflict(`${email} has a pending invitation; delete it to send another`, 'email');
      await tx.insert(userInvites, row);
    });
    const shown = inviteView(row, now);
    req.audit = { resource: 'invite', resourceId: row.id, action: 'create', after: shown };
    return json({ ...shown, token }, 201);
  }

  async function listInvites(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const org = req.caller.organisationId;
    const statuses = csv(req.query, 'status')?.map((s) => {
      const found = INVITE_STATUSES.find((x) => x === s.toLowerCase());
      if (!found) throw Errors.badRequest(`status must be among ${INVITE_STATUSES.join(', ')}`, 'status');
      return found;
    });
    const email = req.query.get('email');
    const wantedEmail = email ? parseEmail(email, 'email') : undefined;
    const { offset, limit } = page(req.query);
    const now = clock();
    const where: Where<typeof userInvites.columns> = (c) => {
      const byStatus = {
        pending: and(eq(c.status, 'pending'), gt(c.expires_at, now)),
        expired: and(eq(c.status, 'pending'), lte(c.expires_at, now)),
        accepted: eq(c.status, 'accepted'),
      };
      return and(
        eq(c.organisation_id, org),
        wantedEmail ? eq(c.email, wantedEmail) : undefined,
        statuses?.length ? or(...statuses.map((s) => byStatus[s])) : undefined,
      );
    };
    const [rows, total] = await Promise.all([
      database.select(userInvites, { where, orderBy: (c) => [desc(c.created_at), desc(c.id)], offset, limit, fresh: true }),
      database.count(userInvites, where, { fresh: true }),
    ]);
    return list(rows.map((r) => inviteView(r, now)), total);
  }

  async function getInvite(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    return json(inviteView(await findInvite(req), clock()));
  }

  async function deleteInvite(req: AdminRequest): Promise<Response> {
    requireOrgAdmin(req.principal);
    const row = await findInvite(req);
    await database.delete(userInvites, (c) => eq(c.id, row.id));
    req.audit = { resource: 'invite', resourceId: row.id, action: 'delete', before: inviteView(row, clock()) };
    return noContent();
  }

  /** The user of the request's own key, if it sends one (a key that does not verify is a 401, as anywhere else). */
  async function acceptingUser(req: PublicAdminRequest, organisationId: string): Promise<string | null> {
    const secret = req.headers.get('x-gateway-api-key');
    if (!secret) return null;
    const caller = deps.verifyKey ? await deps.verifyKey(secret) : undefined;
    if (!caller) throw Errors.unauthorized('Invalid, revoked or expired x-gateway-api-key');
    return caller.organisationId === organisationId ? caller.userId : null;
  }

  async function acceptInvite(req: PublicAdminRequest): Promise<Response> {
    const body = checkAccept(req.body);
    const name = body.name === undefined ? undefined : nonBlank(body.name, 'name');
    const invite = await database.findOne(userInvites, 'token_hash', hashToken(body.token), { fresh: true });
    if (!invite) throw Errors.notFound('No such invitation');
    if (invite.status === 'accepted') throw Errors.badRequest('This invitation was already accepted', 'token');
    const now = clock();
    if (invite.expires_at <= now) throw Errors.badRequest('This invitation has expired', 'token');
    const org = invite.organisation_id;
    const acceptor = await acceptingUser(req, org);

    const { user, granted } = await database.transaction(async (tx) => {
      // The conditional update makes two concurrent accepts of one token end with one winner.
      const won = await tx.update(userInvites, { status: 'accepted', accepted_at: now }, (c) => and(eq(c.id, invite.id), eq(c.status, 'pending')));
      if (won !== 1) throw Errors.badRequest('This invitation was already accepted', 'token');
      const [existing] = await tx.select(users, { where: (c) => and(eq(c.organisation_id, org), eq(c.email, invite.email)), limit: 1 });
      let user: UserRow;
      if (existing) {
        if (existing.id !== acceptor)
          throw Errors.forbidden(
            'This invitation is for an existing user: they accept it themselves, with a key of their own in x-gateway-api-key',
          );
        const role = higherRole(existing.role, invite.role);
        const changes: Partial<UserRow> = {};
        if (role !== existing.role) changes.role = role;
        if (name && !existing.name) changes.name = name;
        if (Object.keys(changes).length) await tx.update(users, { ...changes, updated_at: now }, (c) => eq(c.id, existing.id));
        user = { ...existing, ...changes };
      } else {
        user = { id: crypto.randomUUID(), organisation_id: org, email: invite.email, name: name ?? null, role: invite.role, created_at: now, updated_at: now };
        await tx.insert(users, user);
      }
      // Workspaces deleted since the invitation was sent are skipped.
      const ids = invite.workspaces.map((w) => w.workspace_id);
      const spaces = ids.length ? await tx.select(workspaces, { where: (c) => and(eq(c.organisation_id, org), inArray(c.id, ids)) }) : [];
      const grants = invite.workspaces.flatMap((w) => {
        const workspace = spaces.find((s) => s.id === w.workspace_id);
        return workspace ? [{ workspace, role: w.role }] : [];
      });
      const granted = await grantMemberships(tx, org, user.id, grants, 'keep-higher');
      await tx.update(userInvites, { accepted_user_id: user.id }, (c) => eq(c.id, invite.id));
      return { user, granted };
    }).catch((error: unknown) => {
      // A user with this e-mail created meanwhile: nothing was kept, the token can be used again.
      if (isUniqueViolation(error)) throw Errors.conflict('The user was created meanwhile; accept the invitation again', 'token');
      throw error;
    });

    // The answer goes to the invited person: the new user the token made, or the existing user who accepted.
    const api_keys = await announceAdded(events, org, user.id, granted, 'invite', user.id);
    const shownUser = userView(user, (await membershipsOf(database, org, [user.id])).get(user.id) ?? []);
    req.audit = {
      organisationId: org,
      resource: 'invite',
      resourceId: invite.id,
      action: 'accept',
      after: { user_id: user.id, email: user.email, role: user.role, workspaces: granted.map((g) => ({ id: g.workspaceId, role: g.role })) },
    };
    return json({ object: 'invite_acceptance', invite_id: invite.id, user: shownUser, api_keys });
  }

  return [
    { method: 'POST', path: '/users/invites/accept', public: true, handle: acceptInvite },
    { method: 'POST', path: '/users/invites', scope: 'users.write', role: 'admin', handle: createInvite },
    { method: 'GET', path: '/users/invites', scope: 'users.read', role: 'admin', handle: listInvites },
    { method: 'GET', path: '/users/invites/:inviteId', scope: 'users.read', role: 'admin', handle: getInvite },
    { method: 'DELETE', path: '/users/invites/:inviteId', scope: 'users.write', role: 'admin', handle: deleteInvite },
  ];
}
