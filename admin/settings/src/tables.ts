import { col, defineTable, type Json, type Migration } from '@gateway/sdk';

/** The setting groups stored per organisation (and, for some, per workspace). */
export const SETTING_CATEGORIES = ['security', 'session', 'api_keys'] as const;
export type SettingCategory = (typeof SETTING_CATEGORIES)[number];

/** The organisation's own settings have this workspace_id: a NULL would not be unique in the index. */
export const ORGANISATION_LEVEL = '';

/**
 * One row per organisation (or workspace) and category, holding only the values someone set: defaults are applied
 * when read, so a row never freezes a default.
 */
export const organisationSettings = defineTable(
  'organisation_settings',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** A workspace's overrides, or ORGANISATION_LEVEL. */
    workspace_id: col.string(36).default(ORGANISATION_LEVEL),
    category: col.enum(SETTING_CATEGORIES),
    values: col.json<Record<string, Json>>(),
    /** Bumped by every write: a write applies only over the version it read (concurrent PUTs merge, none is lost). */
    version: col.int().default(0),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'workspace_id', 'category'], unique: true }] },
);

/** Email domains an organisation claims (SSO resolves users by them). */
export const emailDomains = defineTable(
  'email_domains',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** Lower case, ASCII (an internationalised name is stored in its xn-- form). */
    domain: col.string(253),
    allow_subdomains: col.bool().default(false),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'domain'], unique: true }] },
);

/**
 * A workspace's settings of the response cache: which saved config is its embeddings target for the semantic cache
 * (its id only: the config itself stays in saved_configs). One row per workspace that ever set one; a cleared
 * target keeps its row with embeddings_config null.
 */
export const workspaceCacheSettings = defineTable('workspace_cache_settings', {
  workspace_id: col.id(),
  organisation_id: col.ref(),
  /** The saved config's id (never its content, never a slug); null: none set. */
  embeddings_config: col.ref().nullable(),
  updated_at: col.timestamp().default(Date.now),
});

/**
 * Saved log filters (/logs/saved-filters): a name and the common log filters' query values (logs/filters.ts), the
 * workspace named by id, of the organisation or of one workspace. Applied by id to the log list and to exports.
 */
export const logSavedFilters = defineTable(
  'log_saved_filters',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** null: the organisation's (organisation owners and admins manage it); else the workspace's. */
    workspace_id: col.ref().nullable(),
    name: col.string(255),
    filters: col.json<Record<string, string>>(),
    created_by_api_key_id: col.ref().nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'workspace_id'] }] },
);

/** The columns 0005 created (its DDL must not change: a database that applied it is never migrated again). */
const logExportColumnsV1 = {
  id: col.id(),
  organisation_id: col.ref(),
  requested_by_api_key_id: col.ref(),
  format: col.enum(['jsonl', 'csv']),
  query: col.json<Record<string, string>>(),
  status: col.enum(['pending', 'running', 'succeeded', 'failed']),
  rows: col.int().nullable(),
  error: col.text().nullable(),
  created_at: col.timestamp().default(Date.now),
  completed_at: col.timestamp().nullable(),
};
const logExportIndexes = [{ columns: ['organisation_id', 'created_at'] }] as const;
const logExportsV1 = defineTable('log_exports', logExportColumnsV1, { indexes: logExportIndexes });

/**
 * Log exports (/logs/exports): a job that writes the rows a query selected to a file under GATEWAY_EXPORTS_DIR.
 * `query` is the request's filters with a saved filter's values already merged in, so a later change to the saved
 * filter does not change the export.
 */
export const logExports = defineTable(
  'log_exports',
  {
    ...logExportColumnsV1,
    // ---- 0006: who runs it (logs/exports.ts): a job whose runner stopped beating is marked failed, interrupted
    /** The runner (one per process) that took the job. */
    runner_id: col.string(64).nullable(),
    /** The runner's last sign of life while it writes the file (every 30 s). */
    heartbeat_at: col.timestamp().nullable(),
  },
  { indexes: logExportIndexes },
);

/** MySQL 8 has no ADD COLUMN IF NOT EXISTS: added only when information_schema lacks it, so the migration can run again. */
const addColumnMysql = (table: string, column: string, type: string): string[] => [
  `SET @gw_add_column = (SELECT IF(COUNT(*) = 0, 'ALTER TABLE \`${table}\` ADD COLUMN \`${column}\` ${type}', 'SELECT 1') ` +
    `FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${table}' AND COLUMN_NAME = '${column}')`,
  'PREPARE gw_add_column FROM @gw_add_column',
  'EXECUTE gw_add_column',
  'DEALLOCATE PREPARE gw_add_column',
];

export const settingsMigrations: Migration[] = [
  { id: 'settings/0001-organisation-settings', tables: [organisationSettings] },
  { id: 'settings/0002-email-domains', tables: [emailDomains] },
  { id: 'settings/0003-workspace-cache-settings', tables: [workspaceCacheSettings] },
  { id: 'settings/0004-log-saved-filters', tables: [logSavedFilters] },
  { id: 'settings/0005-log-exports', tables: [logExportsV1] },
  {
    id: 'settings/0006-log-export-runs',
    statements: {
      sqlite: ['ALTER TABLE "log_exports" ADD COLUMN "runner_id" TEXT NULL', 'ALTER TABLE "log_exports" ADD COLUMN "heartbeat_at" INTEGER NULL'],
      mysql: [...addColumnMysql('log_exports', 'runner_id', 'VARCHAR(64) NULL'), ...addColumnMysql('log_exports', 'heartbeat_at', 'BIGINT NULL')],
    },
  },
];
