/** Lookups every route shares: a workspace by id or slug, a user, within one organisation. */
import { and, eq, Errors, or, type ReadOptions, type Row, type TransactionHelpers } from '@gateway/sdk';
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

/** The organisation's workspace by id or slug; 404 when there is none (another organisation's is none). */
export async function findWorkspace(database: Reader, organisationId: string, idOrSlug: string, options: ReadOptions = {}): Promise<WorkspaceRow> {
  const row = await lookupWorkspace(database, organisationId, idOrSlug, options);
  if (!row) throw Errors.notFound('No such workspace');
  return row;
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
