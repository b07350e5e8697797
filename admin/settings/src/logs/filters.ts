/**
 * The common filters of every route over `request_logs` (analytics, log groups, and the log list, saved filters and
 * exports may reuse them), parsed from the query string and compiled into one condition with the caller's visibility
 * (visibility.ts). The same SQL runs on SQLite and MySQL; only the metadata lookup differs by dialect.
 *
 * Query parameters (docs/admin/analytics.md, "Filters"); list parameters take a comma list, matched as any of them:
 *
 * | parameter | matches |
 * |---|---|
 * | `time_of_generation_min` / `time_of_generation_max` | `created_at` from (inclusive) / before (exclusive); ISO 8601 or epoch ms |
 * | `workspace_id` | one workspace, by id or slug; an archived one only for organisation owners and admins (404 for others) |
 * | `api_key_id`, `model`, `trace_id`, `user_id` | list |
 * | `ai_service` | list of provider types (`openai`, `anthropic`): the `provider` column |
 * | `provider` | list of provider types or stored providers' slugs: either `provider` or `provider_slug` |
 * | `config_id` | list of saved configs, by id or slug (a slug: every saved config of the organisation with it) |
 * | `prompt_id` | list of prompt ids; `prompt_version` a list of versions |
 * | `status` | list of HTTP status codes |
 * | `metadata` | a JSON object of string values: every key must carry that value |
 * | `cost_min` / `cost_max` | `cost_cents`, US cents, both inclusive (a row without a cost matches neither) |
 * | `latency_min` / `latency_max` | `latency_ms`, milliseconds, both inclusive |
 */
import { savedConfigs } from '@gateway/admin-configs';
import { findWorkspace } from '@gateway/admin-identity';
import { and, type Database, eq, Errors, gte, inArray, lt, lte, or, type Principal, type SQL, sql } from '@gateway/sdk';
import { type LogColumns, type LogVisibilityDeps, visibleLogFilter } from './visibility.ts';

/** The filters as parsed: undefined means "not filtered". */
export interface LogFilters {
  from?: number;
  to?: number;
  workspaceId?: string;
  apiKeyIds?: string[];
  userIds?: string[];
  /** Provider types (the `provider` column). */
  aiServices?: string[];
  /** Provider types or stored providers' slugs. */
  providers?: string[];
  /** Saved config ids: those given and those of the configs whose slug was given. */
  configIds?: string[];
  promptIds?: string[];
  promptVersions?: number[];
  models?: string[];
  traceIds?: string[];
  statuses?: number[];
  metadata?: [string, string][];
  costMin?: number;
  costMax?: number;
  latencyMin?: number;
  latencyMax?: number;
}

/** The query parameters this module reads (a route that takes other parameters may check for unknown ones). */
export const LOG_FILTER_PARAMS = [
  'time_of_generation_min',
  'time_of_generation_max',
  'workspace_id',
  'api_key_id',
  'user_id',
  'ai_service',
  'provider',
  'config_id',
  'prompt_id',
  'prompt_version',
  'model',
  'trace_id',
  'status',
  'metadata',
  'cost_min',
  'cost_max',
  'latency_min',
  'latency_max',
] as const;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
/** Metadata keys become a JSON path: kept to characters that need no escaping in either dialect. */
const METADATA_KEY = /^[\w.-]{1,128}$/;
const MAX_LIST = 100;

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

function textList(query: URLSearchParams, name: string, max: number): string[] | undefined {
  const raw = text(query, name, max * MAX_LIST);
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0 || items.length > MAX_LIST || items.some((s) => s.length > max))
    throw Errors.badRequest(`${name} must be a comma list of at most ${MAX_LIST} values of up to ${max} characters`, name);
  return items;
}

function number(query: URLSearchParams, name: string): number | undefined {
  const raw = text(query, name, 32);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw Errors.badRequest(`${name} must be a non-negative number`, name);
  return value;
}

function metadataPairs(query: URLSearchParams): [string, string][] | undefined {
  const raw = text(query, 'metadata', 4096);
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const bad = () => Errors.badRequest('metadata must be a JSON object of string values with keys of letters, digits, _ . -', 'metadata');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad();
  const pairs = Object.entries(parsed);
  if (pairs.length === 0 || pairs.some(([k, v]) => !METADATA_KEY.test(k) || typeof v !== 'string')) throw bad();
  return pairs as [string, string][];
}

function versions(query: URLSearchParams): number[] | undefined {
  const list = textList(query, 'prompt_version', 10)?.map(Number);
  if (list?.some((v) => !Number.isInteger(v) || v < 0)) throw Errors.badRequest('prompt_version must be a comma list of version numbers', 'prompt_version');
  return list;
}

/**
 * Saved configs named by id or slug: the request log keeps the id. A value is kept as an id (a deleted config's rows
 * still match it) and, where it is a slug of the organisation's saved configs, their ids are added (a slug is unique
 * per workspace, so it may name one config in each of several workspaces).
 */
async function configIds(database: Database, organisationId: string, given: string[] | undefined): Promise<string[] | undefined> {
  if (given === undefined) return undefined;
  const bySlug = await database.select(savedConfigs, { where: (c) => and(eq(c.organisation_id, organisationId), inArray(c.slug, given)) });
  return [...new Set([...given, ...bySlug.map((r) => r.id)])];
}

/** Reads the common filters; the workspace is looked up by id or slug (404 when unknown or not the caller's to name). */
export async function parseLogFilters(database: Database, principal: Principal, query: URLSearchParams): Promise<LogFilters> {
  const from = text(query, 'time_of_generation_min', 64);
  const to = text(query, 'time_of_generation_max', 64);
  const statuses = textList(query, 'status', 3)?.map(Number);
  if (statuses?.some((s) => !Number.isInteger(s) || s < 100 || s > 599))
    throw Errors.badRequest('status must be an HTTP status code or a comma list of them', 'status');
  const workspace = text(query, 'workspace_id', 255);
  let workspaceId: string | undefined;
  if (workspace !== undefined) {
    const row = await findWorkspace(database, principal.caller.organisationId, workspace, { param: 'workspace_id' });
    // Archived workspaces' data stays visible to organisation owners and admins only (SPEC.md).
    if (row.status === 'archived' && !principal.isOrgAdmin) throw Errors.notFound('No such workspace: workspace_id');
    workspaceId = row.id;
  }
  const filters: LogFilters = {
    from: from === undefined ? undefined : parseTime('time_of_generation_min', from),
    to: to === undefined ? undefined : parseTime('time_of_generation_max', to),
    workspaceId,
    apiKeyIds: textList(query, 'api_key_id', 36),
    userIds: textList(query, 'user_id', 36),
    aiServices: textList(query, 'ai_service', 64),
    providers: textList(query, 'provider', 64),
    configIds: await configIds(database, principal.caller.organisationId, textList(query, 'config_id', 64)),
    promptIds: textList(query, 'prompt_id', 64),
    promptVersions: versions(query),
    models: textList(query, 'model', 255),
    traceIds: textList(query, 'trace_id', 128),
    statuses,
    metadata: metadataPairs(query),
    costMin: number(query, 'cost_min'),
    costMax: number(query, 'cost_max'),
    latencyMin: number(query, 'latency_min'),
    latencyMax: number(query, 'latency_max'),
  };
  if (filters.from !== undefined && filters.to !== undefined && filters.from >= filters.to)
    throw Errors.badRequest('time_of_generation_min must be before time_of_generation_max', 'time_of_generation_min');
  return filters;
}

/** `metadata ->> key` in the dialect's words (the path is a bound parameter). */
function metadataValue(dialect: Database['dialect'], column: LogColumns['metadata'], key: string): SQL {
  const path = `$."${key}"`;
  return dialect === 'sqlite' ? sql`json_extract(${column}, ${path})` : sql`JSON_UNQUOTE(JSON_EXTRACT(${column}, ${path}))`;
}

/** The filters as a condition over request_logs (undefined: no filter). */
export function filterCondition(dialect: Database['dialect'], f: LogFilters): (c: LogColumns) => SQL | undefined {
  return (c) =>
    and(
      f.from === undefined ? undefined : gte(c.created_at, f.from),
      f.to === undefined ? undefined : lt(c.created_at, f.to),
      f.workspaceId === undefined ? undefined : sql`${c.workspace_id} = ${f.workspaceId}`,
      f.apiKeyIds === undefined ? undefined : inArray(c.api_key_id, f.apiKeyIds),
      f.userIds === undefined ? undefined : inArray(c.user_id, f.userIds),
      f.aiServices === undefined ? undefined : inArray(c.provider, f.aiServices),
      f.providers === undefined ? undefined : or(inArray(c.provider, f.providers), inArray(c.provider_slug, f.providers)),
      f.configIds === undefined ? undefined : inArray(c.config_id, f.configIds),
      f.promptIds === undefined ? undefined : inArray(c.prompt_id, f.promptIds),
      f.promptVersions === undefined ? undefined : inArray(c.prompt_version, f.promptVersions),
      f.models === undefined ? undefined : inArray(c.model, f.models),
      f.traceIds === undefined ? undefined : inArray(c.trace_id, f.traceIds),
      f.statuses === undefined ? undefined : inArray(c.status, f.statuses),
      ...(f.metadata ?? []).map(([key, value]) => sql`${metadataValue(dialect, c.metadata, key)} = ${value}`),
      f.costMin === undefined ? undefined : gte(c.cost_cents, f.costMin),
      f.costMax === undefined ? undefined : lte(c.cost_cents, f.costMax),
      f.latencyMin === undefined ? undefined : gte(c.latency_ms, f.latencyMin),
      f.latencyMax === undefined ? undefined : lte(c.latency_ms, f.latencyMax),
    );
}

export interface LogScope {
  /** The caller's visible logs that match the filters. */
  where(c: LogColumns): SQL;
  /** No log can match: a route may answer without a query. */
  readonly none: boolean;
  readonly filters: LogFilters;
  /** Whether a visible row's metadata may be shown (visibility.ts). */
  metadataVisible(log: { workspace_id: string | null; api_key_id: string | null }): boolean;
}

/** Filters and visibility in one: what a route over request_logs queries. */
export async function logScope(deps: LogVisibilityDeps & { database: Database }, principal: Principal, query: URLSearchParams): Promise<LogScope> {
  const filters = await parseLogFilters(deps.database, principal, query);
  const visible = await visibleLogFilter(principal, deps);
  const filter = filterCondition(deps.database.dialect, filters);
  return {
    where: (c) => and(visible.where(c), filter(c))!,
    none: visible.none,
    filters,
    metadataVisible: visible.metadataVisible,
  };
}
