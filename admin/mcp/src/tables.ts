import type { SealedAt, SecretMapping } from '@gateway/admin-kit';
import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';

/** Organisation-level integrations have no workspace; `scope` makes their slugs unique among themselves too. */
export const ORGANISATION_SCOPE = 'organisation';

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

/**
 * `user_token`: each user enters their own value of `auth_header`; `oauth`: each user authorises the gateway at the
 * upstream's authorization server (oauth.ts; the client's registration sealed in `auth_secret`). Both are connections.
 */
export const MCP_AUTH_TYPES = ['none', 'header', 'user_token', 'oauth'] as const;
export type McpAuthType = (typeof MCP_AUTH_TYPES)[number];

export const SYNC_STATUSES = ['pending', 'synced', 'failed'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** Where an MCP upstream is and how the gateway authenticates to it. */
export const mcpIntegrations = defineTable(
  'mcp_integrations',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** Null: organisation-level (any workspace's MCP server may use it). */
    workspace_id: col.ref().nullable(),
    /** The workspace id, or `organisation`. */
    scope: col.string(36),
    name: col.string(255),
    slug: col.string(64),
    description: col.text().nullable(),
    url: col.string(2048),
    transport: col.enum(MCP_TRANSPORTS),
    auth_type: col.enum(MCP_AUTH_TYPES),
    /** The static header's name (auth_type `header`); its value is sealed in `auth_secret`. */
    auth_header: col.string(255).nullable(),
    auth_secret: col.text().nullable(),
    /** Values resolved from secret references at request time (target_field `headers.<Name>` or `headers`). */
    secret_mappings: col.json<SecretMapping[]>().nullable(),
    version: col.int().default(1),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'scope', 'slug'], unique: true }, { columns: ['workspace_id'] }] },
);

/** An MCP integration exposed to one workspace at /v1/mcp/<slug>, with its tool lists and the upstream's metadata. */
export const mcpServers = defineTable(
  'mcp_servers',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    mcp_integration_id: col.ref(),
    name: col.string(255),
    slug: col.string(64),
    description: col.text().nullable(),
    /** Only these tools are listed and callable; null: all. */
    allowed_tools: col.json<string[]>().nullable(),
    /** These tools are never listed nor callable. */
    denied_tools: col.json<string[]>().nullable(),
    /** What the last sync read from the upstream (sync.ts, `McpMetadata`). */
    metadata: col.json<JsonObject>().nullable(),
    sync_status: col.enum(SYNC_STATUSES),
    sync_error: col.text().nullable(),
    synced_at: col.timestamp().nullable(),
    version: col.int().default(1),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }, { columns: ['mcp_integration_id'] }] },
);

/** A user's own credential for an MCP server whose integration takes one per user (auth type `user_token`). */
export const mcpConnections = defineTable(
  'mcp_connections',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    mcp_server_id: col.ref(),
    user_id: col.ref(),
    kind: col.enum(['token', 'oauth'] as const),
    /** The header value (`token`), or the OAuth tokens as JSON (`oauth`), sealed for this row. */
    secret: col.text(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['mcp_server_id', 'user_id'], unique: true }, { columns: ['user_id'] }] },
);

export const mcpMigrations: Migration[] = [
  { id: 'mcp/0001-integrations-and-servers', tables: [mcpIntegrations, mcpServers] },
  { id: 'mcp/0002-user-connections', tables: [mcpConnections] },
];

export const connectionSecretAt = (id: string): SealedAt => ({ table: mcpConnections.name, id, field: 'secret' });

/** Where an integration's header value is sealed: it opens only in its own row and column. */
export const authSecretAt = (id: string): SealedAt => ({ table: mcpIntegrations.name, id, field: 'auth_secret' });
