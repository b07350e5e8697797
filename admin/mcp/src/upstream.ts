/**
 * How the gateway reaches an MCP integration's upstream: its URL, transport, and the headers that carry its
 * credentials — the static header opened from its sealed column, and `secret_mappings` resolved from secret
 * references at request time (for the workspace the call acts in), as provider integrations resolve theirs.
 */
import { resolveMappedHeaders, type SecretBox, type SecretResolver } from '@gateway/admin-kit';
import type { Row } from '@gateway/sdk';
import { authSecretAt, type McpTransport, type mcpIntegrations } from './tables.ts';

export type IntegrationRow = Row<typeof mcpIntegrations>;

export interface Upstream {
  readonly url: string;
  readonly transport: McpTransport;
  /** The credentials' headers (never shown, never logged). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface UpstreamDeps {
  box: () => SecretBox;
  secrets: () => SecretResolver | undefined;
}

/**
 * The upstream of `row` for a call acting in `workspaceId`: secrets resolved now (cached briefly by their plugin).
 * `userValue`: a user's own header value (their connection), for an integration of auth type `user_token`.
 */
export async function upstreamOf(row: IntegrationRow, workspaceId: string, deps: UpstreamDeps, userValue?: string): Promise<Upstream> {
  const headers: Record<string, string> = {};
  if (row.auth_type === 'header' && row.auth_header && row.auth_secret) headers[row.auth_header] = deps.box().open(row.auth_secret, authSecretAt(row.id));
  if (row.auth_type === 'user_token' && row.auth_header && userValue !== undefined) headers[row.auth_header] = userValue;
  if (row.auth_type === 'oauth' && userValue !== undefined) headers.Authorization = `Bearer ${userValue}`;
  Object.assign(headers, await resolveMappedHeaders(deps.secrets(), row.organisation_id, workspaceId, row.secret_mappings ?? [], 'mcp'));
  return { url: row.url, transport: row.transport, headers };
}
