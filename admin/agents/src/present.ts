/** Agent integrations, servers and connections as the API answers them: credential values are never shown. */
import { iso } from '@gateway/admin-kit';
import type { Row } from '@gateway/sdk';
import type { StoredCard } from './card-sync.ts';
import type { agentConnections, agentIntegrations, agentServers } from './tables.ts';

export type IntegrationRow = Row<typeof agentIntegrations>;
export type ServerRow = Row<typeof agentServers>;
export type ConnectionRow = Row<typeof agentConnections>;

function presentAuth(row: IntegrationRow) {
  if (row.auth_type === 'header') return { type: 'header' as const, header_name: row.auth_header, header_value: '****' };
  if (row.auth_type === 'user_token') return { type: 'user_token' as const, header_name: row.auth_header };
  return { type: 'none' as const };
}

export function presentIntegration(row: IntegrationRow) {
  return {
    object: 'agent_integration' as const,
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    url: row.url,
    agent_card_url: row.agent_card_url,
    auth: presentAuth(row),
    secret_mappings: row.secret_mappings ?? [],
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentServer(row: ServerRow) {
  return {
    object: 'agent_server' as const,
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    agent_integration_id: row.agent_integration_id,
    /** Where clients send A2A JSON-RPC through the gateway. */
    a2a_path: `/v1/agent-servers/${row.id}/a2a`,
    /** The upstream's card as the last successful sync read it (name, description, version, skills); null before one. */
    agent_card: row.card as StoredCard | null,
    sync_status: row.card_sync_status,
    sync_error: row.card_sync_error,
    synced_at: row.card_synced_at === null ? null : iso(row.card_synced_at),
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A user's connection: whose, when; never the credential. */
export function presentConnection(row: ConnectionRow) {
  return {
    object: 'agent_connection' as const,
    id: row.id,
    agent_server_id: row.agent_server_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
