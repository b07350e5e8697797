/**
 * GET /analytics/summary, /analytics/graphs/:metric, /analytics/groups/:groupBy and /logs/groups/:groupBy: read-only
 * aggregates over the request logs the caller may see (admin-settings' logScope: the common filters and the
 * security settings' visibility), docs/admin/analytics.md.
 */
import { json, list, page } from '@gateway/admin-kit';
import type { LogColumns, LogScope, LogVisibilityDeps } from '@gateway/admin-settings';
import { logScope } from '@gateway/admin-settings';
import { type AdminRequest, type AdminRoute, type Database, Errors, type SQL, sql } from '@gateway/sdk';
import { aggregate, countGroups, GROUP_COLUMNS, type GroupColumn, type Metric, value } from './aggregate.ts';

type Deps = LogVisibilityDeps & { database: Database };

/** The group keys of SPEC.md with the request-log column each reads (docs/admin/analytics.md, "Groups"). */
const GROUP_KEYS: Record<string, (c: LogColumns) => SQL> = {
  /** The provider type (the adapter that answered: openai, anthropic …). */
  ai_service: (c) => sql`${c.provider}`,
  /** The stored provider named (its slug), else the provider type. */
  provider: (c) => sql`COALESCE(${c.provider_slug}, ${c.provider})`,
  model: (c) => sql`${c.model}`,
  status_code: (c) => sql`${c.status}`,
  api_key: (c) => sql`${c.api_key_id}`,
  workspace: (c) => sql`${c.workspace_id}`,
  /** The saved config's id; null: an inline config. */
  config: (c) => sql`${c.config_id}`,
  /** The prompt's id; null: not run from a prompt. */
  prompt: (c) => sql`${c.prompt_id}`,
};
const METADATA_KEY = /^metadata\.([\w.-]{1,128})$/;

/** The graphs' metrics and the columns each draws. */
const GRAPHS: Record<string, readonly Metric[]> = {
  requests: ['requests'],
  cost: ['cost'],
  tokens: ['total_tokens', 'input_tokens', 'output_tokens'],
  latency: ['avg_latency', 'p50_latency', 'p95_latency', 'p99_latency'],
  errors: ['error_count'],
  cache_hits: ['cache_hits'],
  users: ['users'],
};

const SUMMARY: readonly Metric[] = [
  'requests',
  'cost',
  'total_tokens',
  'input_tokens',
  'output_tokens',
  'avg_latency',
  'p50_latency',
  'p95_latency',
  'p99_latency',
  'success_rate',
  'error_count',
  'cache_hits',
  'cache_hit_rate',
  'users',
];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Bucket sizes, smallest first: a graph takes the smallest that gives at most MAX_BUCKETS buckets over its range. */
export const BUCKET_SIZES = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY];
export const MAX_BUCKETS = 100;
const DEFAULT_GRAPH_RANGE = 7 * DAY;

export function bucketSize(from: number, to: number): number {
  return BUCKET_SIZES.find((size) => Math.ceil((to - from) / size) <= MAX_BUCKETS) ?? BUCKET_SIZES.at(-1)!;
}

/** `membersViewAnalytics` / `managersViewAnalytics`: analytics are closed to members or managers when off (403). */
async function requireAnalytics(deps: Deps, req: AdminRequest, scope: LogScope): Promise<void> {
  const { principal } = req;
  if (principal.isOrgAdmin) return;
  const workspaceId = scope.filters.workspaceId ?? req.caller.workspaceId;
  const role = workspaceId ? await principal.workspaceRole(workspaceId) : null;
  if (role === 'admin' || role === 'owner') return;
  const settings = await deps.security.get(req.caller.organisationId, workspaceId);
  if (role === 'manager' ? !settings.managersViewAnalytics : !settings.membersViewAnalytics)
    throw Errors.forbidden(`Analytics are not open to workspace ${role ?? 'member'}s in this workspace`);
}

/** Grouping by metadata, or filtering by it, shows metadata: refused to organisation admins it is hidden from. */
async function requireMetadata(deps: Deps, req: AdminRequest, scope: LogScope): Promise<void> {
  if (req.principal.orgRole === 'owner' || !req.principal.isOrgAdmin) return;
  const settings = await deps.security.get(req.caller.organisationId, scope.filters.workspaceId ?? null);
  if (!settings.organisationAdminsViewLogMetadata) throw Errors.forbidden('Log metadata is not visible to organisation admins here');
}

function groupKey(database: Database, groupBy: string): (c: LogColumns) => SQL {
  const metadata = METADATA_KEY.exec(groupBy);
  if (metadata) {
    const path = `$."${metadata[1]}"`;
    return database.dialect === 'sqlite'
      ? (c) => sql`json_extract(${c.metadata}, ${path})`
      : (c) => sql`JSON_UNQUOTE(JSON_EXTRACT(${c.metadata}, ${path}))`;
  }
  const key = Object.hasOwn(GROUP_KEYS, groupBy) ? GROUP_KEYS[groupBy] : undefined;
  if (key === undefined)
    throw Errors.badRequest(`groupBy must be one of ${Object.keys(GROUP_KEYS).join(', ')} or metadata.<key>`, 'groupBy');
  return key;
}

function groupColumns(query: URLSearchParams): GroupColumn[] {
  const raw = query.get('columns');
  if (!raw) return [];
  const columns = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  const unknown = columns.filter((c) => !(GROUP_COLUMNS as readonly string[]).includes(c));
  if (unknown.length) throw Errors.badRequest(`columns must be a comma list of ${GROUP_COLUMNS.join(', ')}`, 'columns');
  return columns as GroupColumn[];
}

function sortOf(query: URLSearchParams, columns: readonly GroupColumn[]): { by: Metric | 'key'; desc: boolean } {
  const by = query.get('order_by') || 'requests';
  if (by !== 'requests' && by !== 'key' && !(columns as readonly string[]).includes(by))
    throw Errors.badRequest('order_by must be requests, key or one of the columns asked for', 'order_by');
  const order = query.get('order') || 'desc';
  if (order !== 'asc' && order !== 'desc') throw Errors.badRequest('order must be asc or desc', 'order');
  return { by: by as Metric | 'key', desc: order === 'desc' };
}

const keyValue = (k: unknown): string | number | null => (k === null || k === undefined ? null : typeof k === 'number' ? k : String(k));

function groupsRoute(deps: Deps, path: string, scopeName: string, analytics: boolean): AdminRoute {
  return {
    method: 'GET',
    path,
    scope: scopeName,
    async handle(req) {
      const groupBy = req.params.groupBy ?? '';
      const key = groupKey(deps.database, groupBy);
      const columns = groupColumns(req.query);
      const order = sortOf(req.query, columns);
      const p = page(req.query);
      const scope = await logScope(deps, req.principal, req.query);
      if (analytics) await requireAnalytics(deps, req, scope);
      if (groupBy.startsWith('metadata.') || scope.filters.metadata) await requireMetadata(deps, req, scope);
      if (scope.none) return list([], 0, { group_by: groupBy });
      const [total, rows] = await Promise.all([
        countGroups(deps.database, scope, key),
        aggregate(deps.database, scope, { key, metrics: columns, orderBy: order, limit: p.limit, offset: p.offset }),
      ]);
      const data = rows.map((row) => {
        const out: Record<string, unknown> = { key: keyValue(row.k), requests: value('requests', row) };
        for (const column of columns) out[column] = value(column, row);
        return out;
      });
      return list(data, total, { group_by: groupBy });
    },
  };
}

export function analyticsRoutes(deps: Deps): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/analytics/summary',
      scope: 'analytics.read',
      async handle(req) {
        const scope = await logScope(deps, req.principal, req.query);
        await requireAnalytics(deps, req, scope);
        if (scope.filters.metadata) await requireMetadata(deps, req, scope);
        const [row] = scope.none ? [{}] : await aggregate(deps.database, scope, { metrics: SUMMARY });
        const out: Record<string, unknown> = { object: 'analytics_summary' };
        for (const metric of SUMMARY) out[metric] = value(metric, row ?? {});
        return json(out);
      },
    },
    {
      method: 'GET',
      path: '/analytics/graphs/:metric',
      scope: 'analytics.read',
      async handle(req) {
        const metric = req.params.metric ?? '';
        const metrics = GRAPHS[metric];
        if (!metrics) throw Errors.badRequest(`metric must be one of ${Object.keys(GRAPHS).join(', ')}`, 'metric');
        // The range decides the buckets: it defaults to the last seven days up to now.
        const query = new URLSearchParams(req.query);
        if (!query.get('time_of_generation_max')) query.set('time_of_generation_max', String(Date.now()));
        const scopeTo = query.get('time_of_generation_max')!;
        if (!query.get('time_of_generation_min')) {
          const to = /^\d+$/.test(scopeTo) ? Number(scopeTo) : Date.parse(scopeTo);
          if (Number.isFinite(to)) query.set('time_of_generation_min', String(to - DEFAULT_GRAPH_RANGE));
        }
        const scope = await logScope(deps, req.principal, query);
        await requireAnalytics(deps, req, scope);
        if (scope.filters.metadata) await requireMetadata(deps, req, scope);
        const from = scope.filters.from!;
        const to = scope.filters.to!;
        const size = bucketSize(from, to);
        const start = from - (from % size);
        const rows = scope.none
          ? []
          : await aggregate(deps.database, scope, { key: (c) => sql`(${c.created_at} - (${c.created_at} % ${sql.raw(String(size))}))`, metrics });
        const byBucket = new Map(rows.map((row) => [Number(row.k), row]));
        const data: Record<string, unknown>[] = [];
        for (let bucket = start; bucket < to; bucket += size) {
          const row = byBucket.get(bucket) ?? {};
          const point: Record<string, unknown> = { timestamp: new Date(bucket).toISOString() };
          for (const m of metrics) point[m] = value(m, row);
          data.push(point);
        }
        return json({ object: 'analytics_graph', metric, bucket_size_ms: size, data });
      },
    },
    groupsRoute(deps, '/analytics/groups/:groupBy', 'analytics.read', true),
    groupsRoute(deps, '/logs/groups/:groupBy', 'logs.read', false),
  ];
}
