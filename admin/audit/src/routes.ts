/**
 * GET /audit-logs and GET /audit-logs/:id: the caller's organisation's entries, newest first. Organisation owners
 * and admins (and organisation-service keys) with the `audit_logs.read` scope; 403 feature_disabled while
 * AUDIT_LOGS_ENABLED=OFF.
 */
import { iso, json, list, page } from '@gateway/admin-kit';
import { type AdminRoute, and, type Database, desc, eq, Errors, gte, lte, type Where } from '@gateway/sdk';
import { type AuditLogRow, auditLogs } from './table.ts';

export const SCOPES = ['audit_logs.read'] as const;

/** An entry as the API shows it. */
export function present(row: AuditLogRow) {
  return {
    object: 'audit_log',
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    actor: row.actor_api_key_id === null ? null : { api_key_id: row.actor_api_key_id, user_id: row.actor_user_id, key_type: row.actor_key_type },
    action: row.action,
    method: row.method,
    path: row.path,
    resource: row.resource,
    resource_id: row.resource_id,
    before: row.before,
    after: row.after,
    status: row.status,
    created_at: iso(row.at),
  };
}

/** Exact-match filters: query parameter → column. */
const EQUAL = {
  resource: 'resource',
  resource_id: 'resource_id',
  action: 'action',
  api_key_id: 'actor_api_key_id',
  user_id: 'actor_user_id',
  workspace_id: 'workspace_id',
} as const;

function text(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (value === '' || value.length > 191) throw Errors.badRequest(`${name} must be a non-empty string of at most 191 characters`, name);
  return value;
}

/** ISO 8601 date or date-time → epoch ms; 400 naming the parameter otherwise. */
function date(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw Errors.badRequest(`${name} must be an ISO 8601 date or date-time (2025-01-31 or 2025-01-31T12:00:00Z)`, name);
  return ms;
}

/** Every filter of the query, validated before anything is read. */
export function filters(organisationId: string, query: URLSearchParams): Where<typeof auditLogs.columns> {
  const equal = Object.entries(EQUAL).flatMap(([param, column]) => {
    const value = text(query, param);
    return value === undefined ? [] : [[column, value] as const];
  });
  const from = date(query, 'from');
  const to = date(query, 'to');
  if (from !== undefined && to !== undefined && from > to) throw Errors.badRequest('from must not be after to', 'from');
  return (c) =>
    and(
      eq(c.organisation_id, organisationId),
      ...equal.map(([column, value]) => eq(c[column], value)),
      from === undefined ? undefined : gte(c.at, from),
      to === undefined ? undefined : lte(c.at, to),
    );
}

export function auditRoutes(database: Database): AdminRoute[] {
  const base = { scope: 'audit_logs.read', role: 'admin', feature: 'auditLogs' } as const;
  return [
    {
      ...base,
      method: 'GET',
      path: '/audit-logs',
      async handle(req) {
        const p = page(req.query);
        const where = filters(req.caller.organisationId, req.query);
        // Read-your-writes from the writer (an entry written a moment ago); the reader while the writer is down.
        const [rows, total] = await Promise.all([
          database.select(auditLogs, { where, orderBy: (c) => [desc(c.at), desc(c.id)], limit: p.limit, offset: p.offset, fresh: true }),
          database.count(auditLogs, where, { fresh: true }),
        ]);
        return list(rows.map(present), total);
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/audit-logs/:id',
      async handle(req) {
        const id = req.params.id ?? '';
        const row = id.length <= 36 ? await database.findOne(auditLogs, 'id', id, { fresh: true }) : undefined;
        if (!row || row.organisation_id !== req.caller.organisationId) throw Errors.notFound('No such audit log entry');
        return json(present(row));
      },
    },
  ];
}
