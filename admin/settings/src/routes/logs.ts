/**
 * GET /logs and GET /logs/:logId over the request log, filtered by what the security settings let the caller see
 * (logs/visibility.ts) and by the common filters (logs/filters.ts). The list pages by an opaque cursor over
 * (created_at, id) (`cursor`, `limit`; no total: counting every match on each page does not scale), or by
 * `current_page` / `page_size` with a total as before.
 */
import { json, list, page } from '@gateway/admin-kit';
import { requestLogs } from '@gateway/plugin-request-log';
import { type AdminRoute, and, desc, eq, Errors } from '@gateway/sdk';
import { afterCursor, decodeCursor, encodeCursor } from '../logs/cursor.ts';
import { LOG_FORMAT, presentLog } from '../logs/present.ts';
import { logSelection, type SelectionDeps } from '../logs/selection.ts';
import type { LogColumns } from '../logs/visibility.ts';
import { visibleLogFilter } from '../logs/visibility.ts';

/** Rows carry bodies of up to the capture limit each: a page stays well below a hundred of them. */
export const MAX_LOG_PAGE_SIZE = 100;

/** `limit` of the cursor mode: 1 to MAX_LOG_PAGE_SIZE, default 50. */
function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LOG_PAGE_SIZE) throw Errors.badRequest(`limit must be an integer from 1 to ${MAX_LOG_PAGE_SIZE}`, 'limit');
  return n;
}

export function logRoutes(deps: SelectionDeps): AdminRoute[] {
  const { database } = deps;
  return [
    {
      method: 'GET',
      path: '/logs',
      scope: 'logs.read',
      async handle(req) {
        const cursorMode = req.query.has('cursor') || req.query.has('limit');
        const p = cursorMode ? undefined : page(req.query);
        if (p && p.pageSize > MAX_LOG_PAGE_SIZE) throw Errors.badRequest(`page_size must be an integer from 1 to ${MAX_LOG_PAGE_SIZE}`, 'page_size');
        const limit = p ? p.limit : limitOf(req.query);
        const rawCursor = req.query.get('cursor');
        const cursor = rawCursor ? decodeCursor(rawCursor) : undefined;
        const scope = await logSelection(deps, req.principal, req.query);
        if (scope.none) return cursorMode ? json({ object: 'list', data: [], next_cursor: null, log_format: LOG_FORMAT }) : list([], 0, { next_cursor: null, log_format: LOG_FORMAT });
        const where = (c: LogColumns) => and(scope.where(c), cursor ? afterCursor(c, cursor) : undefined);
        const [total, rows] = await Promise.all([
          p ? database.count(requestLogs, where) : undefined,
          database.select(requestLogs, { where, orderBy: (c) => [desc(c.created_at), desc(c.id)], limit: limit + 1, offset: p?.offset }),
        ]);
        const more = rows.length > limit;
        const shown = more ? rows.slice(0, limit) : rows;
        const next_cursor = more ? encodeCursor(shown.at(-1)!) : null;
        const data = shown.map((row) => presentLog(row, { metadataVisible: scope.metadataVisible(row), detail: false }));
        if (total === undefined) return json({ object: 'list', data, next_cursor, log_format: LOG_FORMAT });
        return list(data, total, { next_cursor, log_format: LOG_FORMAT });
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
