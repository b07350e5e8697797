import type { SealedAt, SecretMapping } from '@gateway/admin-kit';
import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';

/** Organisation-level integrations have no workspace; `scope` keeps slugs unique among them too. */
export const ORGANISATION_SCOPE = 'organisation';

/** `user_token`: each user enters their own value of `auth_header` (an agent connection, sealed per user and server). */
export const AGENT_AUTH_TYPES = ['none', 'header', 'user_token'] as const;
export type AgentAuthType = (typeof AGENT_AUTH_TYPES)[number];

export const CARD_SYNC_STATUSES = ['pending', 'synced', 'failed'] as const;
export type CardSyncStatus = (typeof CARD_SYNC_STATUSES)[number];

/** The columns of agent_integrations as migration 0001 created them (later ones are added by 0002). */
const integrationColumnsV1 = {
  id: col.id(),
  organisation_id: col.ref(),
  /** Null: organisation-level (workspaces given access in agent_integration_workspaces may use it). */
  workspace_id: col.ref().nullable(),
  /** The workspace id, or `organisation`. */
  scope: col.string(36),
  name: col.string(255),
  slug: col.string(64),
  description: col.text().nullable(),
  /** The upstream's A2A JSON-RPC endpoint. */
  url: col.string(2048),
  /** Where its agent card is; null: `/.well-known/agent-card.json` (then `agent.json`) at the URL's origin. */
  agent_card_url: col.string(2048).nullable(),
  auth_type: col.enum(AGENT_AUTH_TYPES),
  /** The static header's name (auth_type `header`); its value is sealed in `auth_secret`. */
  auth_header: col.string(255).nullable(),
  auth_secret: col.text().nullable(),
  version: col.int().default(1),
  created_at: col.timestamp().default(Date.now),
  updated_at: col.timestamp().default(Date.now),
};
const integrationIndexes = [{ columns: ['organisation_id', 'scope', 'slug'], unique: true }, { columns: ['workspace_id'] }] as const;
const agentIntegrationsV1 = defineTable('agent_integrations', integrationColumnsV1, { indexes: integrationIndexes });

/** Where an upstream A2A agent is (its JSON-RPC endpoint) and how the gateway authenticates to it. */
export const agentIntegrations = defineTable(
  'agent_integrations',
  {
    ...integrationColumnsV1,
    /** Header values resolved from secret references at request time (target_field `headers.<Name>` or `headers`). */
    secret_mappings: col.json<SecretMapping[]>().nullable(),
  },
  { indexes: integrationIndexes },
);

/** The workspaces an organisation-level agent integration is open to. */
export const agentIntegrationWorkspaces = defineTable(
  'agent_integration_workspaces',
  {
    id: col.id(),
    organisation_id: col.ref(),
    agent_integration_id: col.ref(),
    workspace_id: col.ref(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['agent_integration_id', 'workspace_id'], unique: true }, { columns: ['workspace_id'] }] },
);

/** The skills an integration's agent offers, as the administrator records them (ids as in its agent card). */
export const agentIntegrationSkills = defineTable(
  'agent_integration_skills',
  {
    id: col.id(),
    organisation_id: col.ref(),
    agent_integration_id: col.ref(),
    skill_id: col.string(255),
    name: col.string(255),
    description: col.text().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['agent_integration_id', 'skill_id'], unique: true }] },
);

/** The columns of agent_servers as migration 0001 created them (the card's are added by 0004). */
const serverColumnsV1 = {
  id: col.id(),
  organisation_id: col.ref(),
  workspace_id: col.ref(),
  agent_integration_id: col.ref(),
  name: col.string(255),
  slug: col.string(64),
  description: col.text().nullable(),
  version: col.int().default(1),
  created_at: col.timestamp().default(Date.now),
  updated_at: col.timestamp().default(Date.now),
};
const serverIndexes = [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }, { columns: ['agent_integration_id'] }] as const;
const agentServersV1 = defineTable('agent_servers', serverColumnsV1, { indexes: serverIndexes });

/** An agent integration exposed to one workspace, invoked at /v1/agent-servers/<id>/a2a, with its synced agent card. */
export const agentServers = defineTable(
  'agent_servers',
  {
    ...serverColumnsV1,
    /** What the last card sync kept of the upstream's agent card (card-sync.ts, `StoredCard`); the last good one. */
    card: col.json<JsonObject>().nullable(),
    card_sync_status: col.enum(CARD_SYNC_STATUSES).default('pending'),
    card_sync_error: col.text().nullable(),
    card_synced_at: col.timestamp().nullable(),
  },
  { indexes: serverIndexes },
);

/** The skills an agent server exposes (its agent card is filtered to them); none: all of the agent's. */
export const agentServerSkills = defineTable(
  'agent_server_skills',
  {
    id: col.id(),
    organisation_id: col.ref(),
    agent_server_id: col.ref(),
    skill_id: col.string(255),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['agent_server_id', 'skill_id'], unique: true }] },
);

/** The users whose workspace-user keys may invoke an agent server; none: every user of its workspace. */
export const agentServerUserAccess = defineTable(
  'agent_server_user_access',
  {
    id: col.id(),
    organisation_id: col.ref(),
    agent_server_id: col.ref(),
    user_id: col.ref(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['agent_server_id', 'user_id'], unique: true }] },
);

/** A user's own credential for an agent server whose integration takes one per user (auth type `user_token`). */
export const agentConnections = defineTable(
  'agent_connections',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    agent_server_id: col.ref(),
    user_id: col.ref(),
    /** The header value, sealed for this row. */
    secret: col.text(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['agent_server_id', 'user_id'], unique: true }, { columns: ['user_id'] }] },
);

/** MySQL 8 has no ADD COLUMN IF NOT EXISTS: added only when information_schema lacks it, so the migration can run again. */
const addColumnMysql = (table: string, column: string, type: string): string[] => [
  `SET @gw_add_column = (SELECT IF(COUNT(*) = 0, 'ALTER TABLE \`${table}\` ADD COLUMN \`${column}\` ${type}', 'SELECT 1') ` +
    `FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${table}' AND COLUMN_NAME = '${column}')`,
  'PREPARE gw_add_column FROM @gw_add_column',
  'EXECUTE gw_add_column',
  'DEALLOCATE PREPARE gw_add_column',
];

/** [name, SQLite type, MySQL type] of the columns migration 0003 adds to agent_servers. */
const CARD_COLUMNS: [string, string, string][] = [
  ['card', 'TEXT NULL', 'JSON NULL'],
  // The MySQL type sits inside a quoted statement (addColumnMysql): its quotes are doubled.
  ['card_sync_status', "TEXT NOT NULL DEFAULT 'pending'", "VARCHAR(32) NOT NULL DEFAULT ''pending''"],
  ['card_sync_error', 'TEXT NULL', 'MEDIUMTEXT NULL'],
  ['card_synced_at', 'INTEGER NULL', 'BIGINT NULL'],
];

export const agentMigrations: Migration[] = [
  {
    id: 'agents/0001-integrations-servers-skills-access',
    tables: [agentIntegrationsV1, agentIntegrationWorkspaces, agentIntegrationSkills, agentServersV1, agentServerSkills, agentServerUserAccess],
  },
  {
    id: 'agents/0002-secret-mappings',
    statements: {
      sqlite: ['ALTER TABLE "agent_integrations" ADD COLUMN "secret_mappings" TEXT NULL'],
      mysql: addColumnMysql('agent_integrations', 'secret_mappings', 'JSON NULL'),
    },
  },
  { id: 'agents/0003-user-connections', tables: [agentConnections] },
  {
    id: 'agents/0004-agent-card-sync',
    statements: {
      sqlite: CARD_COLUMNS.map(([name, type]) => `ALTER TABLE "agent_servers" ADD COLUMN "${name}" ${type}`),
      mysql: CARD_COLUMNS.flatMap(([name, , type]) => addColumnMysql('agent_servers', name, type)),
    },
  },
];

export const connectionSecretAt = (id: string): SealedAt => ({ table: agentConnections.name, id, field: 'secret' });

/** Where an integration's header value is sealed: it opens only in its own row and column. */
export const authSecretAt = (id: string): SealedAt => ({ table: agentIntegrations.name, id, field: 'auth_secret' });
