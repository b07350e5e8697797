/**
 * The headers that carry an agent integration's credentials to its upstream, built per call: the static header opened
 * from its sealed column (auth `header`), the caller's own value (auth `user_token`, their agent connection), and
 * `secret_mappings` resolved from secret references for the workspace the call acts in (as MCP integrations do).
 */
import { resolveMappedHeaders, type SecretBox, type SecretResolver } from '@gateway/admin-kit';
import { and, type Database, eq, Errors } from '@gateway/sdk';
import type { IntegrationRow, ServerRow } from './present.ts';
import { agentConnections, authSecretAt, connectionSecretAt } from './tables.ts';

export interface CredentialDeps {
  box: () => SecretBox;
  secrets: () => SecretResolver | undefined;
}

/** `userValue`: the caller's own header value, for an integration of auth type `user_token`. */
export async function credentialHeaders(row: IntegrationRow, workspaceId: string, deps: CredentialDeps, userValue?: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (row.auth_type === 'header' && row.auth_header && row.auth_secret) headers[row.auth_header] = deps.box().open(row.auth_secret, authSecretAt(row.id));
  if (row.auth_type === 'user_token' && row.auth_header && userValue !== undefined) headers[row.auth_header] = userValue;
  Object.assign(headers, await resolveMappedHeaders(deps.secrets(), row.organisation_id, workspaceId, row.secret_mappings ?? [], 'a2a'));
  return headers;
}

/** The user's own credential for `server`, opened; undefined when they have not connected. */
export async function userCredential(database: Database, box: () => SecretBox, server: ServerRow, userId: string): Promise<string | undefined> {
  const [connection] = await database.select(agentConnections, { where: (c) => and(eq(c.agent_server_id, server.id), eq(c.user_id, userId)), limit: 1 });
  return connection ? box().open(connection.secret, connectionSecretAt(connection.id)) : undefined;
}

/** For a `user_token` integration: the caller's credential, or 403 saying how to connect. Otherwise undefined. */
export async function requiredUserCredential(database: Database, box: () => SecretBox, integration: IntegrationRow, server: ServerRow, userId: string | null): Promise<string | undefined> {
  if (integration.auth_type !== 'user_token') return undefined;
  if (!userId) throw Errors.forbidden('This agent server takes each user\'s own credential: call it with a workspace-user key');
  const value = await userCredential(database, box, server, userId);
  if (value === undefined) throw Errors.forbidden(`This agent server takes each user's own credential, and you have none: POST /v1/agent-servers/${server.id}/connections first`);
  return value;
}
