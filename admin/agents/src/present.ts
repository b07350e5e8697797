/** Agent integrations and servers as the API answers them: the credential header's value is never shown. */
import { iso } from '@gateway/admin-kit';
import type { Row } from '@gateway/sdk';
import type { agentIntegrations, agentServers } from './tables.ts';

export type IntegrationRow = Row<typeof agentIntegrations>;
export type ServerRow = Row<typeof agentServers>;

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
    auth: row.auth_type === 'header' ? { type: 'header' as const, header_name: row.auth_header, header_value: '****' } : { type: 'none' as const },
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
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
