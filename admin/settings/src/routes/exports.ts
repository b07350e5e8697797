/**
 * /logs/exports: an asynchronous export of the logs a query selects (the common filters, `saved_filter_id`) as JSON
 * Lines or CSV (logs/exports.ts runs it), its status, the file once done, the list of exports and their deletion. An
 * export is seen (listed, read, deleted) by the key that asked for it and by organisation owners and admins; it holds
 * what that key could see when it asked. Closed by DATA_EXPORTS_ENABLED=OFF (403 feature_disabled).
 */
import { iso, json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRoute, and, type Columns, type Database, desc, eq, Errors, type Principal, type Row } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { CONTENT_TYPES, type ExportFormat } from '../logs/export-format.ts';
import type { LogExportRunner } from '../logs/exports.ts';
import { LOG_FILTER_PARAMS } from '../logs/filters.ts';
import { withSavedFilter } from '../logs/saved-filters.ts';
import { logSelection, type SelectionDeps } from '../logs/selection.ts';
import { logExports } from '../tables.ts';

type ExportRow = Row<typeof logExports>;

const checkCreate = validator(
  Type.Object(
    {
      format: Type.Union([Type.Literal('jsonl'), Type.Literal('csv')]),
      filters: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 32 })),
      saved_filter_id: Type.Optional(Type.String({ minLength: 1, maxLength: 36 })),
    },
    { additionalProperties: false },
  ),
);

const PARAMS = new Set<string>(LOG_FILTER_PARAMS);
const STATUSES = new Set(['pending', 'running', 'succeeded', 'failed']);

/** The exports a principal sees: the organisation's for its owners and admins, else its key's own. */
const visibleExports = (principal: Principal) => (c: Columns<(typeof logExports)['columns']>) =>
  and(eq(c.organisation_id, principal.caller.organisationId), principal.isOrgAdmin ? undefined : eq(c.requested_by_api_key_id, principal.caller.apiKeyId));

export function presentExport(row: ExportRow) {
  return {
    object: 'log_export',
    id: row.id,
    format: row.format,
    status: row.status,
    filters: row.query,
    rows: row.rows,
    error: row.error,
    created_at: iso(row.created_at),
    completed_at: iso(row.completed_at),
    download_url: row.status === 'succeeded' ? `/v1/logs/exports/${row.id}/download` : null,
  };
}

async function findExport(database: Database, principal: Principal, id: string): Promise<ExportRow> {
  const [row] =
    id.length > 0 && id.length <= 36
      ? await database.select(logExports, { where: (c) => and(visibleExports(principal)(c), eq(c.id, id)), limit: 1, fresh: true })
      : [];
  if (!row) throw Errors.notFound('No such export');
  return row;
}

export function exportRoutes(deps: SelectionDeps & { runner: LogExportRunner }): AdminRoute[] {
  const { database, runner } = deps;
  return [
    {
      method: 'POST',
      path: '/logs/exports',
      scope: 'logs.export',
      feature: 'dataExports',
      async handle(req) {
        const body = checkCreate(req.body);
        for (const name of Object.keys(body.filters ?? {}))
          if (!PARAMS.has(name)) throw Errors.badRequest(`filters.${name} is not a log filter (one of ${LOG_FILTER_PARAMS.join(', ')})`, `filters.${name}`);
        const given = new URLSearchParams(body.filters ?? {});
        if (body.saved_filter_id) given.set('saved_filter_id', body.saved_filter_id);
        // The saved filter's values are fixed into the job now; the scope checks them (400s before anything is stored).
        const query = await withSavedFilter(database, req.principal, given);
        query.delete('saved_filter_id');
        const scope = await logSelection(deps, req.principal, query);
        const row: ExportRow = {
          id: crypto.randomUUID(),
          organisation_id: req.caller.organisationId,
          requested_by_api_key_id: req.caller.apiKeyId,
          format: body.format,
          query: Object.fromEntries(query),
          status: 'pending',
          rows: null,
          error: null,
          created_at: Date.now(),
          completed_at: null,
          runner_id: null,
          heartbeat_at: null,
        };
        await database.insert(logExports, row);
        runner.start(row.id, body.format, scope);
        req.audit = { resource: 'log_export', resourceId: row.id, action: 'create', workspaceId: null, after: presentExport(row) };
        return json(presentExport(row), 202);
      },
    },
    {
      method: 'GET',
      path: '/logs/exports',
      scope: ['logs.export', 'logs.read'],
      feature: 'dataExports',
      async handle(req) {
        const p = page(req.query);
        const status = req.query.get('status') || undefined;
        if (status !== undefined && !STATUSES.has(status)) throw Errors.badRequest(`status must be one of ${[...STATUSES].join(', ')}`, 'status');
        const visible = visibleExports(req.principal);
        const where = (c: Columns<(typeof logExports)['columns']>) => and(visible(c), status === undefined ? undefined : eq(c.status, status as ExportRow['status']));
        const [total, rows] = await Promise.all([
          database.count(logExports, where, { fresh: true }),
          database.select(logExports, { where, orderBy: (c) => [desc(c.created_at), desc(c.id)], limit: p.limit, offset: p.offset, fresh: true }),
        ]);
        return list(rows.map(presentExport), total);
      },
    },
    {
      method: 'DELETE',
      path: '/logs/exports/:exportId',
      scope: 'logs.export',
      feature: 'dataExports',
      async handle(req) {
        const row = await findExport(database, req.principal, req.params.exportId ?? '');
        await runner.remove(row.id, row.format);
        req.audit = { resource: 'log_export', resourceId: row.id, action: 'delete', workspaceId: null, before: presentExport(row) };
        return noContent();
      },
    },
    {
      method: 'GET',
      path: '/logs/exports/:exportId',
      scope: ['logs.export', 'logs.read'],
      feature: 'dataExports',
      handle: async (req) => json(presentExport(await findExport(database, req.principal, req.params.exportId ?? ''))),
    },
    {
      method: 'GET',
      path: '/logs/exports/:exportId/download',
      scope: ['logs.export', 'logs.read'],
      feature: 'dataExports',
      async handle(req) {
        const row = await findExport(database, req.principal, req.params.exportId ?? '');
        if (row.status !== 'succeeded') throw Errors.conflict(`The export is ${row.status}, not ready to download`, 'exportId');
        const format = row.format as ExportFormat;
        const file = Bun.file(runner.fileOf(row.id, format));
        if (!(await file.exists())) throw Errors.notFound('The export file is no longer there');
        return new Response(file, {
          headers: {
            'content-type': CONTENT_TYPES[format],
            'content-disposition': `attachment; filename="logs-${row.id}.${format}"`,
          },
        });
      },
    },
  ];
}
