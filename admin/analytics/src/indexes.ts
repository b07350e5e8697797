/**
 * Indexes on request_logs that fit the analytics queries (docs/admin/analytics.md, "Scale"). The request log's own
 * indexes serve the owner's and admins' queries (organisation_id or workspace_id, then the time range); a member who
 * may not see all data reads only their own keys' rows, so the organisation, key and time index keeps their queries
 * (and the api_key_id filter) to those rows. The organisation comes first so that SQLite's planner, without ANALYZE
 * statistics, prefers it to (organisation_id, created_at): it has more equality columns.
 * Kept here, beside the queries they serve, rather than in the request log's table definition.
 */
import type { Migration } from '@gateway/sdk';

type Index = readonly [name: string, columns: readonly string[]];

const INDEXES: readonly Index[] = [['request_logs_org_key_created', ['organisation_id', 'api_key_id', 'created_at']]];

/**
 * The config_id and prompt_id filters (request-log 0005's columns): the organisation, the value, then the range, as
 * for the key. The provider filter and groups need none: a provider is one of few values, read with the range.
 */
const ATTRIBUTION_INDEXES: readonly Index[] = [
  ['request_logs_org_config_created', ['organisation_id', 'config_id', 'created_at']],
  ['request_logs_org_prompt_created', ['organisation_id', 'prompt_id', 'created_at']],
];

/** MySQL 8 has no CREATE INDEX IF NOT EXISTS: created only when information_schema says it is missing. */
const createIndexMysql = (name: string, columns: readonly string[]): string[] => [
  `SET @gw_add_index = (SELECT IF(COUNT(*) = 0, 'CREATE INDEX \`${name}\` ON \`request_logs\` (${columns.map((c) => `\`${c}\``).join(', ')})', 'SELECT 1') ` +
    `FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'request_logs' AND INDEX_NAME = '${name}')`,
  'PREPARE gw_add_index FROM @gw_add_index',
  'EXECUTE gw_add_index',
  'DEALLOCATE PREPARE gw_add_index',
];

const statements = (indexes: readonly Index[]): Migration['statements'] => ({
  sqlite: indexes.map(([name, columns]) => `CREATE INDEX IF NOT EXISTS "${name}" ON "request_logs" (${columns.map((c) => `"${c}"`).join(', ')})`),
  mysql: indexes.flatMap(([name, columns]) => createIndexMysql(name, columns)),
});

export const analyticsMigrations: Migration[] = [
  { id: 'analytics/0001-request-log-indexes', statements: statements(INDEXES) },
  { id: 'analytics/0002-attribution-indexes', statements: statements(ATTRIBUTION_INDEXES) },
];
