/**
 * Lookups every route shares (here and in the plugins that keep objects in workspaces): a workspace by id or slug,
 * a user, within one organisation; the workspaces a caller sees.
 */
import { and, eq, Errors, or, type Principal, type ReadOptions, type Row, type TransactionHelpers } from '@gateway/sdk';
import { users, workspaces } from './tables.ts';

export type WorkspaceRow = Row<typeof workspaces>;
export type UserRow = Row<typeof users>;

/** What a lookup needs of the database: the service itself or a transaction. */
export type Reader = Pick<TransactionHelpers, 'select'>;

/**
 * The organisation's workspace whose id or slug is `idOrSlug`, or undefined. An id wins over a slug (slugs shaped
 * like ids are refused at write time, so the two never meet in practice).
 */
export async function lookupWorkspace(database: Reader, organisationId: string, idOrSlug: string, options: ReadOptions = {}): Promise<WorkspaceRow | undefined> {
  if (!idOrSlug || idOrSlug.length > 255) return undefined;
  const rows = await database.select(workspaces, {
    ...options,
    where: (c) => and(eq(c.organisation_id, organisationId), or(eq(c.id, idOrSlug), eq(c.slug, idOrSlug))),
    limit: 2,
  });
  return rows.find((r) => r.id === idOrSlug) ?? rows[0];
}

export interface FindWorkspaceOptions extends ReadOptions {
  /** The field that named the workspace, quoted in the 404 (`No such workspace: workspace_id`). */
  param?: string;
}

/** The organisation's workspace by id or slug; 404 when there is none (another organisation's is none). */
export async function findWorkspace(database: Reader, organisationId: string, idOrSlug: string, options: FindWorkspaceOptions = {}): Promise<WorkspaceRow> {
  const { param, ...read } = options;
  const row = await lookupWorkspace(database, organisationId, idOrSlug, read);
  if (!row) throw Errors.notFound(param === undefined ? 'No such workspace' : `No such workspace: ${param}`);
  return row;
}

/** A workspace new objects may be put in: an archived one takes none (409 naming `param`). */
export function requireActive(workspace: WorkspaceRow, param = 'workspace_id'): string {
  if (workspace.status === 'archived') throw Errors.conflict('The workspace is archived', param);
  return workspace.id;
}

/** Ids of the organisation's workspaces the caller has any role in; `all` for organisation owners and admins. */
export async function visibleWorkspaces(database: Reader, principal: Principal): Promise<string[] | 'all'> {
  if (principal.isOrgAdmin) return 'all';
  const rows = await database.select(workspaces, { where: (c) => eq(c.organisation_id, principal.caller.organisationId) });
  const roles = await Promise.all(rows.map((r) => principal.workspaceRole(r.id)));
  return rows.filter((_, i) => roles[i]).map((r) => r.id);
}

/** The organisation's user by id, or undefined. */
export async function lookupUser(database: Reader, organisationId: string, userId: string, options: ReadOptions = {}): Promise<UserRow | undefined> {
  if (!userId || userId.length > 255) return undefined;
  const [row] = await database.select(users, { ...options, where: (c) => and(eq(c.organisation_id, organisationId), eq(c.id, userId)), limit: 1 });
  return row;
}

/** The organisation's user by id; 404 otherwise. */
export async function findUser(database: Reader, organisationId: string, userId: string, options: ReadOptions = {}): Promise<UserRow> {
  const row = await lookupUser(database, organisationId, userId, options);
  if (!row) throw Errors.notFound('No such user');
  return row;
}
