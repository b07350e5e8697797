import { col, defineTable, type Migration } from '@gateway/sdk';

export const ORGANISATION_ROLES = ['owner', 'admin', 'member'] as const;
export type OrganisationRole = (typeof ORGANISATION_ROLES)[number];
export const WORKSPACE_ROLES = ['admin', 'manager', 'member'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];
export const WORKSPACE_STATUSES = ['active', 'archived'] as const;
export type WorkspaceStatus = (typeof WORKSPACE_STATUSES)[number];

export const organisations = defineTable('organisations', {
  id: col.id(),
  name: col.string(255),
  slug: col.string(255).unique(),
  created_at: col.timestamp().default(Date.now),
});

const workspaceColumnsV1 = {
  id: col.id(),
  organisation_id: col.ref(),
  name: col.string(255),
  slug: col.string(255),
  status: col.enum(WORKSPACE_STATUSES).default('active'),
  created_at: col.timestamp().default(Date.now),
};
const workspaceIndexes = [{ columns: ['organisation_id', 'slug'] as const, unique: true }];

/** The table as 0001 created it: its DDL must not change (a database that applied 0001 never runs it again). */
const workspacesV1 = defineTable('workspaces', workspaceColumnsV1, { indexes: workspaceIndexes });

/** What a workspace's `defaults` holds: metadata added to the workspace's requests. */
export interface WorkspaceDefaults {
  metadata?: Record<string, string>;
}

export const workspaces = defineTable(
  'workspaces',
  {
    ...workspaceColumnsV1,
    // 0003: added to the table of 0001.
    description: col.text().nullable(),
    defaults: col.json<WorkspaceDefaults>().nullable(),
    updated_at: col.timestamp().nullable(),
    archived_at: col.timestamp().nullable(),
    /** When the workspace's usage limits were last reset (SPEC.md: workspace responses include it). */
    last_reset_at: col.timestamp().nullable(),
  },
  { indexes: workspaceIndexes },
);

/** People of an organisation, with their organisation role. */
export const users = defineTable(
  'users',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** Stored lower-case: one person, one row, whatever the case they typed. */
    email: col.string(320),
    name: col.string(255).nullable(),
    role: col.enum(ORGANISATION_ROLES).default('member'),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['organisation_id', 'email'], unique: true }] },
);

/** A user's role in a workspace. */
export const workspaceMembers = defineTable(
  'workspace_members',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    user_id: col.ref(),
    role: col.enum(WORKSPACE_ROLES).default('member'),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['workspace_id', 'user_id'], unique: true }, { columns: ['user_id'] }] },
);

/** One workspace an invitation grants. */
export interface InviteWorkspace {
  workspace_id: string;
  role: WorkspaceRole;
}

/** An invitation to join the organisation; the token is stored as its SHA-256 only. */
export const userInvites = defineTable(
  'user_invites',
  {
    id: col.id(),
    organisation_id: col.ref(),
    email: col.string(320),
    role: col.enum(ORGANISATION_ROLES).default('member'),
    workspaces: col.json<InviteWorkspace[]>().default(() => []),
    token_hash: col.string(64).unique(),
    status: col.enum(['pending', 'accepted']).default('pending'),
    expires_at: col.timestamp(),
    invited_by_key: col.ref().nullable(),
    invited_by_user: col.ref().nullable(),
    accepted_user_id: col.ref().nullable(),
    accepted_at: col.timestamp().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'email'] }] },
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

const WORKSPACE_COLUMNS_0003: [string, string, string][] = [
  ['description', 'TEXT NULL', 'MEDIUMTEXT NULL'],
  ['defaults', 'TEXT NULL', 'JSON NULL'],
  ['updated_at', 'INTEGER NULL', 'BIGINT NULL'],
  ['archived_at', 'INTEGER NULL', 'BIGINT NULL'],
  ['last_reset_at', 'INTEGER NULL', 'BIGINT NULL'],
];

export const identityMigrations: Migration[] = [
  { id: 'identity/0001-organisations-workspaces', tables: [organisations, workspacesV1] },
  { id: 'identity/0002-users-members', tables: [users, workspaceMembers] },
  {
    id: 'identity/0003-workspace-details',
    statements: {
      sqlite: WORKSPACE_COLUMNS_0003.map(([name, type]) => `ALTER TABLE "workspaces" ADD COLUMN "${name}" ${type}`),
      mysql: WORKSPACE_COLUMNS_0003.flatMap(([name, , type]) => addColumnMysql('workspaces', name, type)),
    },
  },
  { id: 'identity/0004-user-invites', tables: [userInvites] },
];
