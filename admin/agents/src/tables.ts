import type { SealedAt } from '@gateway/admin-kit';
import { col, defineTable, type Migration } from '@gateway/sdk';

/** Organisation-level integrations have no workspace; `scope` keeps slugs unique among them too. */
export const ORGANISATION_SCOPE = 'organisation';

export const AGENT_AUTH_TYPES = ['none', 'header'] as const;
export type AgentAuthType = (typeof AGENT_AUTH_TYPES)[number];

/** Where an upstream A2A agent is (its JSON-RPC endpoint) and how the gateway authenticates to it. */
export const agentIntegrations = defineTable(
  'agent_integrations',
  {
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
  },
  { indexes: [{ columns: ['organisation_id', 'scope', 'slug'], unique: true }, { columns: ['workspace_id'] }] },
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

/** An agent integration exposed to one workspace, invoked at /v1/agent-servers/<id>/a2a. */
export const agentServers = defineTable(
  'agent_servers',
  {
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
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }, { columns: ['agent_integration_id'] }] },
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

export const agentMigrations: Migration[] = [
  {
    id: 'agents/0001-integrations-servers-skills-access',
    tables: [agentIntegrations, agentIntegrationWorkspaces, agentIntegrationSkills, agentServers, agentServerSkills, agentServerUserAccess],
  },
];

/** Where an integration's header value is sealed: it opens only in its own row and column. */
export const authSecretAt = (id: string): SealedAt => ({ table: agentIntegrations.name, id, field: 'auth_secret' });
