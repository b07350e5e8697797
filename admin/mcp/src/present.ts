/** MCP integrations and servers as the API answers them: secrets never shown (the header's value is masked). */
import { iso } from '@gateway/admin-kit';
import type { JsonObject, Row } from '@gateway/sdk';
import type { McpMetadata } from './metadata.ts';
import type { mcpConnections, mcpServers } from './tables.ts';
import type { IntegrationRow } from './upstream.ts';

export type ServerRow = Row<typeof mcpServers>;

export function presentIntegration(row: IntegrationRow) {
  return {
    object: 'mcp_integration' as const,
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    url: row.url,
    transport: row.transport,
    auth:
      row.auth_type === 'header'
        ? { type: 'header' as const, header_name: row.auth_header, header_value: '****' }
        : row.auth_type === 'user_token'
          ? { type: 'user_token' as const, header_name: row.auth_header }
          : row.auth_type === 'oauth'
            ? { type: 'oauth' as const }
            : { type: 'none' as const },
    secret_mappings: row.secret_mappings ?? [],
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const metadataOf = (row: ServerRow): McpMetadata | null => row.metadata as McpMetadata | null;

/** The list and get view: what the upstream says it is, and how the last sync went. */
export function presentServer(row: ServerRow) {
  const meta = metadataOf(row);
  return {
    object: 'mcp_server' as const,
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description ?? meta?.server.description ?? null,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    mcp_integration_id: row.mcp_integration_id,
    title: meta?.server.title ?? null,
    icons: meta?.server.icons ?? [],
    server_name: meta?.server.name ?? null,
    server_version: meta?.server.version ?? null,
    protocol_version: meta?.protocol_version ?? null,
    tools_count: meta ? meta.tools.length : null,
    allowed_tools: row.allowed_tools,
    denied_tools: row.denied_tools,
    sync_status: row.sync_status,
    sync_error: row.sync_error,
    synced_at: iso(row.synced_at),
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** GET /mcp-servers/:id/metadata: the whole of what the last sync read. */
export function presentMetadata(row: ServerRow) {
  return {
    object: 'mcp_server_metadata' as const,
    id: row.id,
    sync_status: row.sync_status,
    sync_error: row.sync_error,
    synced_at: iso(row.synced_at),
    metadata: (row.metadata as JsonObject | null) ?? null,
  };
}

export function presentConnection(row: Row<typeof mcpConnections>) {
  return {
    object: 'mcp_connection' as const,
    id: row.id,
    mcp_server_id: row.mcp_server_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    kind: row.kind,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
