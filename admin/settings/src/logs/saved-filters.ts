/**
 * Saved log filters: stored values of the common log filters (filters.ts), checked as the list checks them, with the
 * workspace filter kept by id (a slug may be given; renaming the workspace does not break the filter). A filter is
 * the organisation's (organisation owners and admins write it, everyone reads it) or a workspace's (anyone with a
 * role there reads and writes it; to others it does not exist). Applying one by `saved_filter_id` puts its values
 * under the query's own: a parameter the request sets wins.
 */
import { findWorkspace } from '@gateway/admin-identity';
import { and, type Database, eq, Errors, GatewayError, type Principal, type Row } from '@gateway/sdk';
import { LOG_FILTER_PARAMS, parseLogFilters } from './filters.ts';
import { logSavedFilters } from '../tables.ts';

export type SavedFilterRow = Row<typeof logSavedFilters>;

const PARAMS = new Set<string>(LOG_FILTER_PARAMS);

/** The filter values as stored, checked by the list's own parser; 400 naming `filters.<param>`. */
export async function checkFilterValues(database: Database, principal: Principal, raw: Record<string, unknown>): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!PARAMS.has(name)) throw Errors.badRequest(`filters.${name} is not a log filter (one of ${LOG_FILTER_PARAMS.join(', ')})`, `filters.${name}`);
    if (value === null || value === '') continue;
    // metadata may be given as the object itself; lists as arrays.
    const text = name === 'metadata' && typeof value === 'object' && !Array.isArray(value) ? JSON.stringify(value) : Array.isArray(value) ? value.join(',') : value;
    if (typeof text !== 'string' && typeof text !== 'number') throw Errors.badRequest(`filters.${name} must be a string`, `filters.${name}`);
    values[name] = String(text);
  }
  let parsed: Awaited<ReturnType<typeof parseLogFilters>>;
  try {
    parsed = await parseLogFilters(database, principal, new URLSearchParams(values));
  } catch (error) {
    if (error instanceof GatewayError && error.param && PARAMS.has(error.param))
      throw error.status === 404 ? Errors.notFound(`No such workspace: filters.${error.param}`) : Errors.badRequest(error.message, `filters.${error.param}`);
    throw error;
  }
  if (parsed.workspaceId !== undefined) values.workspace_id = parsed.workspaceId;
  return values;
}

/** The saved filter the caller may see, by id; 404 otherwise. */
export async function findSavedFilter(database: Database, principal: Principal, id: string): Promise<SavedFilterRow> {
  const [row] =
    id.length > 0 && id.length <= 36
      ? await database.select(logSavedFilters, { where: (c) => and(eq(c.organisation_id, principal.caller.organisationId), eq(c.id, id)), limit: 1, fresh: true })
      : [];
  if (!row || (row.workspace_id !== null && (await principal.workspaceRole(row.workspace_id)) === null)) throw Errors.notFound('No such saved filter');
  return row;
}

/** Whether the caller may change or delete it (it is visible to them already). */
export function requireWritable(principal: Principal, row: Pick<SavedFilterRow, 'workspace_id'>): void {
  if (row.workspace_id === null && !principal.isOrgAdmin)
    throw Errors.forbidden('Only organisation owners and admins manage the organisation’s saved filters');
}

/** The workspace a filter is saved in (id or slug), which the caller must have a role in; null: the organisation. */
export async function savedFilterWorkspace(database: Database, principal: Principal, idOrSlug: string | null | undefined): Promise<string | null> {
  if (idOrSlug === undefined || idOrSlug === null) {
    requireWritable(principal, { workspace_id: null });
    return null;
  }
  const workspace = await findWorkspace(database, principal.caller.organisationId, idOrSlug, { param: 'workspace_id' });
  if ((await principal.workspaceRole(workspace.id)) === null) throw Errors.notFound('No such workspace: workspace_id');
  if (workspace.status === 'archived') throw Errors.conflict('The workspace is archived', 'workspace_id');
  return workspace.id;
}

/** The query with a saved filter's values under it (`saved_filter_id`); the query itself when it names none. */
export async function withSavedFilter(database: Database, principal: Principal, query: URLSearchParams): Promise<URLSearchParams> {
  const id = query.get('saved_filter_id');
  if (!id) return query;
  let row: SavedFilterRow;
  try {
    row = await findSavedFilter(database, principal, id);
  } catch {
    throw Errors.notFound('No such saved filter: saved_filter_id');
  }
  const merged = new URLSearchParams(query);
  for (const [name, value] of Object.entries(row.filters)) if (!merged.has(name)) merged.set(name, value);
  return merged;
}
