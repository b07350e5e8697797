/**
 * GET /logs and GET /logs/:logId over the request log, filtered by what the security settings let the caller see
 * (logs/visibility.ts).
 */
import { json, list, page } from '@gateway/admin-kit';
import { requestLogs } from '@gateway/plugin-request-log';
import { type AdminRoute, and, type Database, desc, eq, Errors, gte, inArray, lt, type SQL } from '@gateway/sdk';
import { LOG_FORMAT, presentLog } from '../logs/present.ts';
import { type LogColumns, visibleLogFilter, type LogVisibilityDeps } from '../logs/visibility.ts';
import { findWorkspace } from '@gateway/admin-identity';

/** Rows carry bodies of up to the capture limit each: a page stays well below a hundred of them. */
export const MAX_LOG_PAGE_SIZE = 100;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO 8601 date or date-time, or epoch milliseconds; 400 naming the parameter otherwise. */
export function parseTime(name: string, raw: string): number {
  const ms = /^\d{1,16}$/.test(raw) ? Number(raw) : ISO_DATE.test(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(ms)) throw Errors.badRequest(`${name} must be an ISO 8601 date-time or epoch milliseconds`, name);
  return ms;
}

function text(query: URLSearchParams, name: string, max: number): string | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw.length > max) throw Errors.badRequest(`${name} is longer than ${max} characters`, name);
  return raw;
}

/** The filters of GET /logs as a condition; the workspace may be named by id or slug. */
async function filters(database: Database, organisationId: string, query: URLSearchParams): Promise<(c: LogColumns) => SQL | undefined> {
  const workspace = text(query, 'workspace_id', 255);
  const workspaceId = workspace === undefined ? undefined : (await findWorkspace(database, organisationId, workspace)).id;
  const statusRaw = text(query, 'status', 200);
  const statuses = statusRaw?.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (statuses && (statuses.length === 0 || statuses.some((s) => !Number.isInteger(s) || s < 100 || s > 599)))
    throw Errors.badRequest('status must be an HTTP status code or a comma list of them', 'status');
  const provider = text(query, 'provider', 64);
  const model = text(query, 'model', 255);
  const apiKeyId = text(query, 'api_key_id', 36);
  const after = text(query, 'created_after', 64);
  const before = text(query, 'created_before', 64);
  const afterMs = after === undefined ? undefined : parseTime('created_after', after);
  const beforeMs = before === undefined ? undefined : parseTime('created_before', before);
  return (c) =>
    and(
      workspaceId === undefined ? undefined : eq(c.workspace_id, workspaceId),
      statuses === undefined ? undefined : inArray(c.status, statuses),
      provider === undefined ? undefined : eq(c.provider, provider),
      model === undefined ? undefined : eq(c.model, model),
      apiKeyId === undefined ? undefined : eq(c.api_key_id, apiKeyId),
      afterMs === undefined ? undefined : gte(c.created_at, afterMs),
      beforeMs === undefined ? undefined : lt(c.created_at, beforeMs),
    );
}

export function logRoutes(deps: LogVisibilityDeps & { database: Database }): AdminRoute[] {
  const { database } = deps;
  return [
    {
      method: 'GET',
      path: '/logs',
      scope: 'logs.read',
      async handle(req) {
        const p = page(req.query);
        if (p.pageSize > MAX_LOG_PAGE_SIZE) throw Errors.badRequest(`page_size must be an integer from 1 to ${MAX_LOG_PAGE_SIZE}`, 'page_size');
        const filter = await filters(database, req.caller.organisationId, req.query);
        const visible = await visibleLogFilter(req.principal, deps);
        if (visible.none) return list([], 0, { log_format: LOG_FORMAT });
        const where = (c: LogColumns) => and(visible.where(c), filter(c));
        const [total, rows] = await Promise.all([
          database.count(requestLogs, where),
          database.select(requestLogs, { where, orderBy: (c) => [desc(c.created_at), desc(c.id)], limit: p.limit, offset: p.offset }),
        ]);
        const data = rows.map((row) => presentLog(row, { metadataVisible: visible.metadataVisible(row), detail: false }));
        return list(data, total, { log_format: LOG_FORMAT });
      },
    },
    {
      method: 'GET',
      path: '/logs/:logId',
      scope: 'logs.read',
      async handle(req) {
        const visible = await visibleLogFilter(req.principal, deps);
        const id = req.params.logId ?? '';
        const [row] = visible.none || id.length > 36
          ? []
          : await database.select(requestLogs, { where: (c) => and(visible.where(c), eq(c.id, id)), limit: 1 });
        if (!row) throw Errors.notFound('No such log');
        return json(presentLog(row, { metadataVisible: visible.metadataVisible(row), detail: true }));
      },
    },
  ];
}
