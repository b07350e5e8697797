/** Finding this plugin's rows within one organisation or workspace, and the workspace references of a body. */
import { findWorkspace, type WorkspaceRow } from '@gateway/admin-identity';
import {
  type AdminRequest,
  and,
  asc,
  type ColumnMap,
  type ColumnSpec,
  type Database,
  eq,
  Errors,
  GatewayError,
  inArray,
  ne,
  or,
  type RowOf,
  type TableDefBase,
  type TransactionHelpers,
  type Where,
} from '@gateway/sdk';
import { page } from '@gateway/admin-kit';
import { requireReader, workspaceOf } from './access.ts';
import type { Ctx } from './context.ts';
import type { IntegrationRow } from './present.ts';
import { integrations, workspaceProviders } from './tables.ts';

type Reader = Pick<TransactionHelpers, 'select'>;

/** The organisation's integration by id or slug; 404 otherwise. */
export async function findIntegration(database: Reader, organisationId: string, idOrSlug: string): Promise<IntegrationRow> {
  const rows = idOrSlug
    ? await database.select(integrations, {
        fresh: true,
        where: (c) => and(eq(c.organisation_id, organisationId), or(eq(c.id, idOrSlug), eq(c.slug, idOrSlug))),
        limit: 2,
      })
    : [];
  const row = rows.find((r) => r.id === idOrSlug) ?? rows[0];
  if (!row) throw Errors.notFound('No such integration');
  return row;
}

export interface AccessInput {
  workspace: WorkspaceRow;
  enabled: boolean;
}

/** `[{id, enabled}]` with ids or slugs of the organisation's workspaces; 400 naming the entry otherwise. */
export async function resolveAccess(database: Database, organisationId: string, refs: readonly { id: string; enabled?: boolean }[], base: string): Promise<AccessInput[]> {
  const out: AccessInput[] = [];
  const seen = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const param = `${base}[${i}].id`;
    let workspace: WorkspaceRow;
    try {
      workspace = await findWorkspace(database, organisationId, ref.id);
    } catch (error) {
      if (error instanceof GatewayError && error.status === 404) throw Errors.badRequest(`${param}: no workspace ${JSON.stringify(ref.id)} in the organisation`, param);
      throw error;
    }
    if (seen.has(workspace.id)) throw Errors.badRequest(`${param}: the workspace appears twice in the list`, param);
    seen.add(workspace.id);
    out.push({ workspace, enabled: ref.enabled ?? true });
  }
  return out;
}

/**
 * Workspaces among `workspaceIds` that still need the default provider `slug` of `integrationId`; 409 when one of
 * them has another provider of that slug.
 */
export async function defaultProviderTargets(database: Reader, integrationId: string, slug: string, workspaceIds: readonly string[], param: string): Promise<string[]> {
  if (workspaceIds.length === 0) return [];
  const existing = await database.select(workspaceProviders, {
    fresh: true,
    where: (c) => and(inArray(c.workspace_id, [...workspaceIds]), eq(c.slug, slug)),
  });
  const clash = existing.find((p) => p.integration_id !== integrationId);
  if (clash) throw Errors.conflict(`A provider with slug ${slug} already exists in workspace ${clash.workspace_id}`, param);
  const have = new Set(existing.map((p) => p.workspace_id));
  return workspaceIds.filter((id) => !have.has(id));
}

/** A string column (ids, references, slugs), whatever its default. */
type Text = ColumnSpec<string, false, boolean>;
/** The columns of an object kept in one workspace and named by id or by slug there (providers, virtual keys). */
type WorkspaceObject = ColumnMap & { id: Text; organisation_id: Text; workspace_id: Text; slug: Text };

/** The object of `:id` by id, or by slug in the workspace the query names (the caller's by default); 404 otherwise. */
export async function findInWorkspace<C extends WorkspaceObject>(ctx: Ctx, req: AdminRequest, table: TableDefBase<C>, notFound: string): Promise<RowOf<C>> {
  const ref = req.params.id ?? '';
  const workspaceRef = req.query.get('workspace_id');
  const workspaceId = workspaceRef ? (await workspaceOf(ctx, req, workspaceRef, 'workspace_id')).id : req.caller.workspaceId;
  const rows = await ctx.database.select(table, {
    fresh: true,
    where: (c) => and(eq(c.organisation_id, req.caller.organisationId), or(eq(c.id, ref), and(eq(c.slug, ref), eq(c.workspace_id, workspaceId)))),
    limit: 2,
  });
  const row = rows.find((r) => r.id === ref) ?? rows[0];
  if (!row) throw Errors.notFound(notFound);
  return row;
}

/** Slugs of the objects of one workspace (`table`), read from the writer: what a new object's slug must avoid. */
export async function workspaceSlugs<C extends WorkspaceObject>(database: Reader, table: TableDefBase<C>, workspaceId: string): Promise<Set<string>> {
  return new Set((await database.select(table, { fresh: true, where: (c) => eq(c.workspace_id, workspaceId) })).map((r) => r.slug as string));
}

/** How many other objects of the workspace have `slug` (a PUT's clash check). */
export function otherSlugs<C extends WorkspaceObject>(database: Reader & Pick<TransactionHelpers, 'count'>, table: TableDefBase<C>, row: { id: string; workspace_id: string }) {
  return (slug: string): Promise<number> =>
    database.count(table, (c) => and(eq(c.workspace_id, row.workspace_id), eq(c.slug, slug), ne(c.id, row.id)), { fresh: true });
}

/** A page of the objects of the workspace the query names (the caller's by default), oldest first; any role reads. */
export async function pageInWorkspace<C extends WorkspaceObject & { created_at: ColumnSpec<number, false, boolean> }>(
  ctx: Ctx,
  req: AdminRequest,
  table: TableDefBase<C>,
): Promise<{ rows: RowOf<C>[]; total: number }> {
  const workspace = await workspaceOf(ctx, req, req.query.get('workspace_id'), 'workspace_id');
  await requireReader(req, workspace.id);
  const p = page(req.query);
  const where: Where<C> = (c) => eq(c.workspace_id, workspace.id);
  const [rows, total] = await Promise.all([
    ctx.database.select(table, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
    ctx.database.count(table, where),
  ]);
  return { rows, total };
}
