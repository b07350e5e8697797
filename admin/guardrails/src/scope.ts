/**
 * What saved guardrails and saved configs share about where a stored object lives: its workspace (given by id or
 * slug), which workspaces a caller sees, the role a change needs, slugs, and duplicate-key errors.
 */
import { workspaces } from '@gateway/admin-identity';
import { and, eq, Errors, or, type Principal, type Role, roleAtLeast, type Row, type TransactionHelpers } from '@gateway/sdk';

export type WorkspaceRow = Row<typeof workspaces>;
type Reader = Pick<TransactionHelpers, 'select'>;

/** The organisation's workspace whose id or slug is `ref`; 404 naming `param` otherwise (another organisation's is none). */
export async function findWorkspace(database: Reader, organisationId: string, ref: string, param = 'workspace_id'): Promise<WorkspaceRow> {
  const rows =
    ref && ref.length <= 255
      ? await database.select(workspaces, {
          where: (c) => and(eq(c.organisation_id, organisationId), or(eq(c.id, ref), eq(c.slug, ref))),
          limit: 2,
          fresh: true,
        })
      : [];
  const row = rows.find((r) => r.id === ref) ?? rows[0];
  if (!row) throw Errors.notFound(`No such workspace: ${param}`);
  return row;
}

/** A workspace new objects may be put in: an archived one takes none (409). */
export function requireActive(workspace: WorkspaceRow, param = 'workspace_id'): string {
  if (workspace.status === 'archived') throw Errors.conflict('The workspace is archived', param);
  return workspace.id;
}

/**
 * The caller's role in a workspace, at least `least`. No role at all: 404 with `missing` (the object is as good as
 * absent to a caller who cannot see its workspace); a role below `least`: 403.
 */
export async function requireRole(principal: Principal, workspaceId: string, least: Role, missing: string): Promise<Role> {
  const role = await principal.workspaceRole(workspaceId);
  if (!role) throw Errors.notFound(missing);
  if (!roleAtLeast(role, least)) throw Errors.forbidden(`This needs the ${least} role in the workspace`);
  return role;
}

/** Ids of the organisation's workspaces the caller has any role in; `all` for organisation owners and admins. */
export async function visibleWorkspaces(database: Reader, principal: Principal): Promise<string[] | 'all'> {
  if (principal.isOrgAdmin) return 'all';
  const rows = await database.select(workspaces, { where: (c) => eq(c.organisation_id, principal.caller.organisationId) });
  const roles = await Promise.all(rows.map((r) => principal.workspaceRole(r.id)));
  return rows.filter((_, i) => roles[i]).map((r) => r.id);
}

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a string shaped like an id (`crypto.randomUUID()`). */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A client's slug: the pattern, and never shaped like an id (objects are found by id or slug). 400 otherwise. */
export function checkSlug(slug: string, param = 'slug'): string {
  if (!SLUG_PATTERN.test(slug)) throw Errors.badRequest(`${param} must match ^[a-z0-9][a-z0-9-]{1,62}$`, param);
  if (isUuid(slug)) throw Errors.badRequest(`${param} must not have the shape of an id`, param);
  return slug;
}

/** A slug made from a name plus a random suffix, so that two objects of the same name do not collide. */
export function generatedSlug(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  const suffix = crypto.randomUUID().slice(0, 8);
  return base ? `${base}-${suffix}` : `s-${suffix}`;
}

/** A unique-key violation from either driver, through drizzle's wrapping. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno, message } = e as { code?: unknown; errno?: unknown; message?: unknown };
    if (code === 'ER_DUP_ENTRY' || errno === 1062) return true;
    if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT_UNIQUE')) return true;
    if (typeof message === 'string' && (message.includes('UNIQUE constraint failed') || message.includes('Duplicate entry'))) return true;
  }
  return false;
}
