import { col, defineTable, type AttemptRecord, type Migration } from '@gateway/sdk';

/** The columns of the first migration. Kept as they were: 0001 creates exactly these, later migrations add to them. */
const columnsV1 = {
  id: col.id(),
  trace_id: col.string(128),
  span_id: col.string(128).nullable(),
  parent_span_id: col.string(128).nullable(),
  span_name: col.string(255).nullable(),
  organisation_id: col.ref().nullable(),
  workspace_id: col.ref().nullable(),
  api_key_id: col.ref().nullable(),
  provider: col.string(64).nullable(),
  model: col.string(255).nullable(),
  endpoint: col.string(32),
  method: col.string(16),
  path: col.string(1024),
  status: col.int(),
  latency_ms: col.int(),
  upstream_latency_ms: col.int().nullable(),
  prompt_tokens: col.int().nullable(),
  completion_tokens: col.int().nullable(),
  total_tokens: col.int().nullable(),
  cache_status: col.string(32).nullable(),
  target_index: col.string(255).nullable(),
  retry_count: col.int().default(0),
  metadata: col.json<Record<string, string>>().nullable(),
  request_body: col.text().nullable(),
  response_body: col.text().nullable(),
  error_code: col.string(64).nullable(),
  error_message: col.text().nullable(),
  attempts: col.json<AttemptRecord[]>().nullable(),
  created_at: col.timestamp(),
};

const indexes = [
  { columns: ['organisation_id', 'created_at'] },
  { columns: ['workspace_id', 'created_at'] },
  { columns: ['trace_id'] },
] as const;

/** The table as 0001 created it (its DDL must not change: a database that applied it is never migrated again). */
const requestLogsV1 = defineTable('request_logs', columnsV1, { indexes });

export const requestLogs = defineTable(
  'request_logs',
  {
    ...columnsV1,
    /** Results of the request's hooks and guardrails (plugins/hooks), feedback included; async ones too. */
    hook_results: col.json<unknown[]>().nullable(),
    // ---- cost (README, "Cost"): the parts of the prompt and completion tokens that are priced apart
    /** Of prompt_tokens: read from the provider's prompt cache. */
    cache_read_input_tokens: col.int().nullable(),
    /** Of prompt_tokens: written to the provider's prompt cache. */
    cache_write_input_tokens: col.int().nullable(),
    audio_input_tokens: col.int().nullable(),
    image_input_tokens: col.int().nullable(),
    /** Of completion_tokens: spent on reasoning. */
    reasoning_tokens: col.int().nullable(),
    audio_output_tokens: col.int().nullable(),
    /** The call's cost in US cents (fractional); null when not priced. */
    cost_cents: col.double().nullable(),
    /** true: priced; false: usage known but the model has no price (counted as such, cost null); null: nothing to price. */
    priced: col.bool().nullable(),
    // ---- who and what (0005; docs/admin/analytics.md, "Definitions"): null in rows written before it
    /** The user the calling key belongs to (workspace-user keys); null for service keys. Analytics' `users`. */
    user_id: col.ref().nullable(),
    /** The stored provider named (`@slug`, without the `@`); null when the config named a provider type. */
    provider_slug: col.string(64).nullable(),
    /** The saved config used, by id; null for an inline config. */
    config_id: col.ref().nullable(),
    /** The prompt the call ran from (the prompts plugin) and its version. */
    prompt_id: col.string(64).nullable(),
    prompt_version: col.int().nullable(),
  },
  { indexes },
);

/**
 * MySQL 8 has no `ADD COLUMN IF NOT EXISTS` (MariaDB has): the column is added only when information_schema says it
 * is missing, so the statements can run again after a crash between them and the migration's record.
 */
const addColumnMysql = (table: string, column: string, type: string): string[] => [
  `SET @gw_add_column = (SELECT IF(COUNT(*) = 0, 'ALTER TABLE \`${table}\` ADD COLUMN \`${column}\` ${type}', 'SELECT 1') ` +
    `FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${table}' AND COLUMN_NAME = '${column}')`,
  'PREPARE gw_add_column FROM @gw_add_column',
  'EXECUTE gw_add_column',
  'DEALLOCATE PREPARE gw_add_column',
];

/** MySQL 8 has no `CREATE INDEX IF NOT EXISTS`: the index is created only when information_schema lacks it. */
const addIndexMysql = (table: string, index: string, columns: string): string[] => [
  `SET @gw_add_index = (SELECT IF(COUNT(*) = 0, 'CREATE INDEX \`${index}\` ON \`${table}\` (${columns})', 'SELECT 1') ` +
    `FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${table}' AND INDEX_NAME = '${index}')`,
  'PREPARE gw_add_index FROM @gw_add_index',
  'EXECUTE gw_add_index',
  'DEALLOCATE PREPARE gw_add_index',
];

/**
 * Background jobs over the log that one process of several runs at a time (retention.ts): the holder and how long
 * its lease lasts, taken by a conditional UPDATE.
 */
export const requestLogJobs = defineTable('request_log_jobs', {
  name: col.string(64).unique(),
  owner: col.string(64).nullable(),
  lease_until: col.timestamp(),
});

/** The columns 0003 adds, with their MySQL types. */
const COST_COLUMNS: readonly [string, 'INT' | 'DOUBLE' | 'BOOLEAN'][] = [
  ['cache_read_input_tokens', 'INT'],
  ['cache_write_input_tokens', 'INT'],
  ['audio_input_tokens', 'INT'],
  ['image_input_tokens', 'INT'],
  ['reasoning_tokens', 'INT'],
  ['audio_output_tokens', 'INT'],
  ['cost_cents', 'DOUBLE'],
  ['priced', 'BOOLEAN'],
];

/** The columns 0005 adds, with their MySQL and SQLite types. */
const ATTRIBUTION_COLUMNS: readonly [string, mysql: string, sqlite: string][] = [
  ['user_id', 'VARCHAR(36)', 'TEXT'],
  ['provider_slug', 'VARCHAR(64)', 'TEXT'],
  ['config_id', 'VARCHAR(36)', 'TEXT'],
  ['prompt_id', 'VARCHAR(64)', 'TEXT'],
  ['prompt_version', 'INT', 'INTEGER'],
];

export const requestLogMigrations: Migration[] = [
  { id: 'request-log/0001-request-logs', tables: [requestLogsV1] },
  {
    id: 'request-log/0002-hook-results',
    statements: {
      sqlite: ['ALTER TABLE "request_logs" ADD COLUMN "hook_results" TEXT NULL'],
      mysql: addColumnMysql('request_logs', 'hook_results', 'JSON NULL'),
    },
  },
  {
    id: 'request-log/0003-cost',
    statements: {
      sqlite: COST_COLUMNS.map(([column, type]) => `ALTER TABLE "request_logs" ADD COLUMN "${column}" ${type === 'DOUBLE' ? 'REAL' : 'INTEGER'} NULL`),
      mysql: COST_COLUMNS.flatMap(([column, type]) => addColumnMysql('request_logs', column, `${type} NULL`)),
    },
  },
  {
    // Retention finds the oldest rows of every organisation at once: an index on created_at alone.
    id: 'request-log/0004-retention',
    tables: [requestLogJobs],
    statements: {
      sqlite: ['CREATE INDEX IF NOT EXISTS "request_logs_created_at_idx" ON "request_logs" ("created_at")'],
      mysql: addIndexMysql('request_logs', 'request_logs_created_at_idx', '`created_at`'),
    },
  },
  {
    // The user, stored provider, saved config and prompt of a call (analytics' users, provider, config and prompt).
    id: 'request-log/0005-attribution',
    statements: {
      sqlite: ATTRIBUTION_COLUMNS.map(([column, , type]) => `ALTER TABLE "request_logs" ADD COLUMN "${column}" ${type} NULL`),
      mysql: ATTRIBUTION_COLUMNS.flatMap(([column, type]) => addColumnMysql('request_logs', column, `${type} NULL`)),
    },
  },
];
