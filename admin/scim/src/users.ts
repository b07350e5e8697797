/**
 * /Users: a SCIM user is an identity `users` row (e-mail = the primary e-mail, else userName, lower-cased; the
 * organisation role from `roles`, case-insensitive) plus its `scim_users` row (userName as sent, externalId, active).
 * Deactivating (`active: false`) or deleting a user removes their API keys (`member.removed`); deleting also removes
 * them from the organisation.
 */
import { ORGANISATION_ROLES, type OrganisationRole, users, workspaceMembers } from '@gateway/admin-identity';
import { and, asc, eq, inArray } from '@gateway/sdk';
import { pageOf, parseFilter } from './filter.ts';
import { addMembers, type MembershipDeps, removeMembers } from './memberships.ts';
import { booleanOf, idsOf, parsePatch } from './patch.ts';
import { badValue, notFound, ScimError, scimJson } from './scim-errors.ts';
import { scimGroupMembers, scimGroups, scimUsers } from './tables.ts';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export interface ScimContext extends MembershipDeps {
  readonly organisationId: string;
  /** SCIM_MEMBERSHIP_USER_MODE=ON: groups are managed through /Users and shown on them. */
  readonly membershipUserMode: boolean;
  /** The base URL of /scim/v2 for `meta.location`. */
  readonly base: string;
}

interface UserFields {
  userName: string;
  email: string;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  active: boolean;
  role: OrganisationRole;
  groups?: string[];
}

type UserRow = { id: string; email: string; name: string | null; role: OrganisationRole; created_at: number; updated_at: number | null };
type ScimRow = { id: string; user_name: string; external_id: string | null; given_name: string | null; family_name: string | null; active: boolean; created_at: number; updated_at: number };

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** An organisation role from SCIM `roles` (`[{"value":"Admin"}]`, a string, …), case-insensitive; member by default. */
function roleOf(value: unknown, fallback: OrganisationRole): OrganisationRole {
  const first = Array.isArray(value) ? (value.find((r) => (r as { primary?: unknown })?.primary === true) ?? value[0]) : value;
  if (first === undefined || first === null) return fallback;
  const raw = typeof first === 'string' ? first : (first as { value?: unknown }).value;
  const role = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (!(ORGANISATION_ROLES as readonly string[]).includes(role)) throw badValue(`Unknown role ${JSON.stringify(raw)}: use ${ORGANISATION_ROLES.join(', ')}`);
  // Ownership is given and taken only through the administration API: an owner stays owner whatever a provisioning
  // run sends (identity providers send roles with every PUT), and nobody becomes owner by SCIM.
  if (fallback === 'owner') return 'owner';
  if (role === 'owner') throw badValue('The owner role is given only through the administration API, never by SCIM');
  return role as OrganisationRole;
}

function primaryEmail(emails: unknown): string | null {
  if (!Array.isArray(emails)) return null;
  const chosen = emails.find((e) => (e as { primary?: unknown })?.primary === true || (e as { primary?: unknown })?.primary === 'True') ?? emails[0];
  return str((chosen as { value?: unknown } | undefined)?.value);
}

/** The fields of a full user resource (POST, PUT). */
function fieldsOf(body: unknown, current?: UserFields): UserFields {
  const b = (body ?? {}) as Record<string, unknown>;
  const userName = str(b.userName);
  if (!userName) throw badValue('userName is required');
  const name = (b.name ?? {}) as Record<string, unknown>;
  const email = (primaryEmail(b.emails) ?? userName).toLowerCase();
  if (!email.includes('@')) throw badValue('The user needs an e-mail address: an emails value, or a userName that is one');
  return {
    userName,
    email,
    externalId: str(b.externalId),
    givenName: str(name.givenName),
    familyName: str(name.familyName),
    displayName: str(b.displayName) ?? str(name.formatted),
    active: b.active === undefined ? true : booleanOf(b.active, 'active'),
    role: roleOf(b.roles, current?.role ?? 'member'),
    groups: b.groups === undefined ? undefined : idsOf(b.groups),
  };
}

async function groupsOf(ctx: ScimContext, userIds: readonly string[]): Promise<Map<string, { value: string; display: string }[]>> {
  const out = new Map<string, { value: string; display: string }[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const links = await ctx.database.select(scimGroupMembers, { where: (c) => inArray(c.user_id, [...userIds]), fresh: true });
  if (links.length === 0) return out;
  const groups = new Map(
    (await ctx.database.select(scimGroups, { where: (c) => inArray(c.id, [...new Set(links.map((l) => l.group_id))]), fresh: true })).map((g) => [g.id, g]),
  );
  for (const link of links) {
    const g = groups.get(link.group_id);
    if (g) out.get(link.user_id)?.push({ value: g.id, display: g.display_name });
  }
  return out;
}

function present(ctx: ScimContext, user: UserRow, scim: ScimRow, groups?: { value: string; display: string }[]): Record<string, unknown> {
  const formatted = [scim.given_name, scim.family_name].filter(Boolean).join(' ');
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(scim.external_id ? { externalId: scim.external_id } : {}),
    userName: scim.user_name,
    name: { ...(scim.given_name ? { givenName: scim.given_name } : {}), ...(scim.family_name ? { familyName: scim.family_name } : {}), ...(formatted ? { formatted } : {}) },
    ...(user.name ? { displayName: user.name } : {}),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: scim.active,
    roles: [{ value: user.role, primary: true }],
    ...(groups ? { groups } : {}),
    meta: {
      resourceType: 'User',
      created: new Date(scim.created_at).toISOString(),
      lastModified: new Date(scim.updated_at).toISOString(),
      location: `${ctx.base}/Users/${user.id}`,
    },
  };
}

async function load(ctx: ScimContext, id: string): Promise<{ user: UserRow; scim: ScimRow }> {
  const [scim] = await ctx.database.select(scimUsers, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.id, id)), limit: 1, fresh: true });
  const [user] = scim ? await ctx.database.select(users, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.id, id)), limit: 1, fresh: true }) : [];
  if (!scim || !user) throw notFound(`User ${id}`);
  return { user, scim };
}

async function respond(ctx: ScimContext, id: string, status = 200): Promise<Response> {
  const { user, scim } = await load(ctx, id);
  const groups = ctx.membershipUserMode ? (await groupsOf(ctx, [id])).get(id) : undefined;
  return scimJson(present(ctx, user, scim, groups), status);
}

/** The organisation's groups among `ids`; 400 naming one that is not. */
async function groupRows(ctx: ScimContext, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const rows = await ctx.database.select(scimGroups, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), inArray(c.id, [...new Set(ids)])), fresh: true });
  const missing = ids.find((id) => !rows.some((r) => r.id === id));
  if (missing) throw badValue(`No such group: ${missing}`);
  return rows;
}

/** Membership mode: the user's groups become exactly `groupIds`. */
async function setGroups(ctx: ScimContext, userId: string, groupIds: readonly string[], op: 'add' | 'replace' | 'remove'): Promise<void> {
  const current = new Set((await groupsOf(ctx, [userId])).get(userId)?.map((g) => g.value));
  const wanted = await groupRows(ctx, groupIds);
  if (op !== 'remove') for (const g of wanted) if (!current.has(g.id)) await addMembers(ctx, g, [userId]);
  const drop = op === 'remove' ? wanted.filter((g) => current.has(g.id)) : op === 'replace' ? await groupRows(ctx, [...current].filter((id) => !groupIds.includes(id))) : [];
  for (const g of drop) await removeMembers(ctx, g, [userId]);
}

/** Deactivation and deletion: the user's API keys go (member.removed, organisation-wide). */
async function announceRemoved(ctx: ScimContext, userId: string): Promise<void> {
  await ctx.events?.emit('member.removed', { organisationId: ctx.organisationId, workspaceId: null, userId, via: 'scim' });
}

async function store(ctx: ScimContext, id: string, f: UserFields, wasActive: boolean | undefined): Promise<void> {
  const now = Date.now();
  await ctx.database.transaction(async (tx) => {
    await tx.update(users, { email: f.email, name: f.displayName, role: f.role, updated_at: now }, (c) => eq(c.id, id));
    await tx.update(
      scimUsers,
      { user_name: f.userName, external_id: f.externalId, given_name: f.givenName, family_name: f.familyName, active: f.active, updated_at: now },
      (c) => eq(c.id, id),
    );
  });
  if (wasActive && !f.active) await announceRemoved(ctx, id);
}

async function emailTaken(ctx: ScimContext, email: string, except: string): Promise<boolean> {
  const rows = await ctx.database.select(users, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.email, email)), limit: 2, fresh: true });
  return rows.some((r) => r.id !== except);
}

export async function createUser(ctx: ScimContext, body: unknown): Promise<Response> {
  const f = fieldsOf(body);
  const [existing] = await ctx.database.select(users, { where: (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.email, f.email)), limit: 1, fresh: true });
  if (existing) {
    const linked = await ctx.database.count(scimUsers, (c) => eq(c.id, existing.id), { fresh: true });
    if (linked > 0) throw new ScimError(409, `A user with userName ${f.userName} already exists`, 'uniqueness');
  }
  const id = existing?.id ?? crypto.randomUUID();
  const now = Date.now();
  await ctx.database.transaction(async (tx) => {
    // A user who was there before provisioning (invited, say) is taken over rather than duplicated.
    if (existing)
      await tx.update(users, { name: f.displayName ?? existing.name, role: existing.role === 'owner' ? 'owner' : f.role, updated_at: now }, (c) => eq(c.id, id));
    else await tx.insert(users, { id, organisation_id: ctx.organisationId, email: f.email, name: f.displayName, role: f.role, created_at: now });
    await tx.insert(scimUsers, {
      id,
      organisation_id: ctx.organisationId,
      user_name: f.userName,
      external_id: f.externalId,
      given_name: f.givenName,
      family_name: f.familyName,
      active: f.active,
      created_at: now,
      updated_at: now,
    });
  });
  if (ctx.membershipUserMode && f.groups) await setGroups(ctx, id, f.groups, 'replace');
  return respond(ctx, id, 201);
}

export async function getUser(ctx: ScimContext, id: string): Promise<Response> {
  return respond(ctx, id);
}

export async function listUsers(ctx: ScimContext, query: URLSearchParams): Promise<Response> {
  const filter = parseFilter(query.get('filter'));
  const { startIndex, count } = pageOf(query);
  let rows = await ctx.database.select(scimUsers, {
    where: (c) => eq(c.organisation_id, ctx.organisationId),
    orderBy: (c) => [asc(c.created_at), asc(c.id)],
    fresh: true,
  });
  let people = rows.length ? await ctx.database.select(users, { where: (c) => inArray(c.id, rows.map((r) => r.id)), fresh: true }) : [];
  if (filter) {
    const v = filter.value.toLowerCase();
    // userName is case-insensitive (RFC 7643 caseExact false); externalId is compared as sent.
    if (filter.attribute === 'username') rows = rows.filter((r) => r.user_name.toLowerCase() === v);
    else if (filter.attribute === 'externalid') rows = rows.filter((r) => r.external_id === filter.value);
    else {
      const named = new Set(people.filter((p) => p.name === filter.value).map((p) => p.id));
      rows = rows.filter((r) => named.has(r.id));
    }
  }
  const total = rows.length;
  const pageRows = rows.slice(startIndex - 1, startIndex - 1 + count);
  people = people.filter((p) => pageRows.some((r) => r.id === p.id));
  const byId = new Map(people.map((p) => [p.id, p]));
  const groups = ctx.membershipUserMode ? await groupsOf(ctx, pageRows.map((r) => r.id)) : undefined;
  const resources = pageRows.flatMap((r) => {
    const user = byId.get(r.id);
    return user ? [present(ctx, user, r, groups?.get(r.id))] : [];
  });
  return scimJson({ schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources });
}

export async function replaceUser(ctx: ScimContext, id: string, body: unknown): Promise<Response> {
  const { user, scim } = await load(ctx, id);
  const f = fieldsOf(body, { ...currentFields(user, scim) });
  if (await emailTaken(ctx, f.email, id)) throw new ScimError(409, `Another user has the e-mail ${f.email}`, 'uniqueness');
  await store(ctx, id, f, scim.active);
  if (ctx.membershipUserMode && f.groups) await setGroups(ctx, id, f.groups, 'replace');
  return respond(ctx, id);
}

function currentFields(user: UserRow, scim: ScimRow): UserFields {
  return {
    userName: scim.user_name,
    email: user.email,
    externalId: scim.external_id,
    givenName: scim.given_name,
    familyName: scim.family_name,
    displayName: user.name,
    active: scim.active,
    role: user.role,
  };
}

/** One attribute of a PATCH (a path, or a key of a path-less value; Entra sends `name.givenName` as such a key). */
async function patchAttribute(ctx: ScimContext, id: string, f: UserFields, op: 'add' | 'replace' | 'remove', attribute: string, value: unknown): Promise<void> {
  const clear = op === 'remove';
  switch (attribute) {
    case 'active':
      f.active = clear ? false : booleanOf(value, 'active');
      return;
    case 'username':
      if (clear) throw new ScimError(400, 'userName cannot be removed', 'mutability');
      f.userName = str(value) ?? f.userName;
      return;
    case 'externalid':
      f.externalId = clear ? null : str(value);
      return;
    case 'displayname':
      f.displayName = clear ? null : str(value);
      return;
    case 'name.givenname':
      f.givenName = clear ? null : str(value);
      return;
    case 'name.familyname':
      f.familyName = clear ? null : str(value);
      return;
    case 'name.formatted':
      return;
    case 'name': {
      const n = (value ?? {}) as Record<string, unknown>;
      f.givenName = clear ? null : (str(n.givenName) ?? f.givenName);
      f.familyName = clear ? null : (str(n.familyName) ?? f.familyName);
      return;
    }
    case 'emails':
    case 'emails.value': {
      if (clear) return;
      const email = attribute === 'emails' ? primaryEmail(value) : str(value);
      if (email) f.email = email.toLowerCase();
      return;
    }
    case 'roles':
      if (!clear) f.role = roleOf(value, f.role);
      else if (f.role !== 'owner') f.role = 'member';
      return;
    case 'groups':
      if (!ctx.membershipUserMode) throw new ScimError(400, 'groups is read-only unless SCIM_MEMBERSHIP_USER_MODE=ON', 'mutability');
      await setGroups(ctx, id, idsOf(value), op);
      return;
    default:
      // Attributes this service does not keep (phone numbers, addresses, enterprise extension): accepted and ignored,
      // as RFC 7644 lets a service provider do, so that a provisioning run does not stop on them.
      return;
  }
}

export async function patchUser(ctx: ScimContext, id: string, body: unknown): Promise<Response> {
  const ops = parsePatch(body);
  const { user, scim } = await load(ctx, id);
  const f = currentFields(user, scim);
  for (const op of ops) {
    if (op.path === undefined) {
      if (!op.value || typeof op.value !== 'object') throw badValue('A PATCH without a path needs an object value');
      for (const [key, value] of Object.entries(op.value as Record<string, unknown>)) await patchAttribute(ctx, id, f, op.op, key.toLowerCase(), value);
    } else {
      // emails[type eq "work"].value and the like: the address itself.
      const path = /^emails\[.*\]\.value$/.test(op.path) ? 'emails.value' : op.path;
      await patchAttribute(ctx, id, f, op.op, path, op.value);
    }
  }
  if (await emailTaken(ctx, f.email, id)) throw new ScimError(409, `Another user has the e-mail ${f.email}`, 'uniqueness');
  await store(ctx, id, f, scim.active);
  return respond(ctx, id);
}

export async function deleteUser(ctx: ScimContext, id: string): Promise<Response> {
  const { user } = await load(ctx, id);
  if (user.role === 'owner') throw new ScimError(400, 'An organisation owner cannot be deleted through SCIM: transfer ownership first', 'mutability');
  await ctx.database.transaction(async (tx) => {
    await tx.delete(scimGroupMembers, (c) => eq(c.user_id, id));
    await tx.delete(workspaceMembers, (c) => eq(c.user_id, id));
    await tx.delete(scimUsers, (c) => eq(c.id, id));
    await tx.delete(users, (c) => and(eq(c.organisation_id, ctx.organisationId), eq(c.id, id)));
  });
  await announceRemoved(ctx, id);
  return new Response(null, { status: 204 });
}
