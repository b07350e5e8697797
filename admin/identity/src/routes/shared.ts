/** What the identity routes share: their dependencies and the rules about owners. */
import type { AdminEvents } from '@gateway/admin-kit';
import { and, type Caller, type Database, eq, Errors, type Principal, type TransactionHelpers } from '@gateway/sdk';
import { lookupWorkspace } from '../find.ts';
import { parseWorkspaceRole } from '../input.ts';
import type { Grant } from '../memberships.ts';
import { users } from '../tables.ts';

export interface IdentityDeps {
  database: Database;
  events: AdminEvents;
  /**
   * The caller of an `x-gateway-api-key` secret (service `apiKeyVerifier`), for the one public route that may be
   * called by a user with a key: accepting an invitation addressed to an existing user. Without it such an
   * invitation cannot be accepted.
   */
  verifyKey?: (secret: string) => Promise<Caller | undefined>;
  /** Clock, for tests of expiry. */
  now?: () => number;
}

export async function countOwners(database: Pick<TransactionHelpers, 'count'>, organisationId: string): Promise<number> {
  return database.count(users, (c) => and(eq(c.organisation_id, organisationId), eq(c.role, 'owner')), { fresh: true });
}

/**
 * Only an owner makes owners; the one exception is the first owner of an organisation that has none (a new
 * deployment has only the bootstrap organisation-service key, which acts as an admin).
 */
export async function requireMayGrantOwner(database: Pick<TransactionHelpers, 'count'>, principal: Principal, param: string): Promise<void> {
  if (principal.orgRole === 'owner') return;
  if ((await countOwners(database, principal.caller.organisationId)) === 0) return;
  throw Errors.forbidden(`Only an organisation owner may grant the owner role (${param})`);
}

/** Changing or removing an owner takes an owner. */
export function requireOwner(principal: Principal, what: string): void {
  if (principal.orgRole !== 'owner') throw Errors.forbidden(`Only an organisation owner may ${what}`);
}

/**
 * Adding someone to a workspace hands them (and whatever is made for them there, their default key) to that
 * workspace: someone whose organisation role is above the caller's is added only by a caller who holds that role.
 * One's own membership needs nothing more.
 */
export function requireMayAddMember(principal: Principal, user: { id: string; role: string }, param: string): void {
  if (user.id === principal.caller.userId) return;
  if (user.role === 'owner' && principal.orgRole !== 'owner') throw Errors.forbidden(`Only an organisation owner may add an owner to a workspace (${param})`);
  if (user.role === 'admin' && !principal.isOrgAdmin)
    throw Errors.forbidden(`Only an organisation owner or admin may add an organisation admin to a workspace (${param})`);
}

/** Trimmed, not empty; 400 naming the field otherwise. */
export function nonBlank(value: string, param: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw Errors.badRequest(`${param} must not be blank`, param);
  return trimmed;
}

/** 400 when a list names the same thing twice. */
export function refuseDuplicates(values: readonly string[], param: (index: number) => string): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) throw Errors.badRequest(`${param(i)} appears twice in the list`, param(i));
    seen.add(v);
  });
}

/** Body references to workspaces (id or slug) with a role, resolved; a missing one is a 400 naming its field. */
export async function resolveGrants(
  database: Database,
  organisationId: string,
  refs: readonly { id: string; role?: string }[],
  base: string,
): Promise<Grant[]> {
  const grants: Grant[] = [];
  for (const [i, ref] of refs.entries()) {
    const param = `${base}[${i}].id`;
    const role = parseWorkspaceRole(ref.role ?? 'member', `${base}[${i}].role`);
    const workspace = await lookupWorkspace(database, organisationId, ref.id.trim(), { fresh: true });
    if (!workspace) throw Errors.badRequest(`${param}: no workspace ${JSON.stringify(ref.id)} in the organisation`, param);
    grants.push({ workspace, role, param });
  }
  refuseDuplicates(grants.map((g) => g.workspace.id), (i) => `${base}[${i}].id`);
  return grants;
}
