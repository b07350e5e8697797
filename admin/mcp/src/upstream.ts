/**
 * How the gateway reaches an MCP integration's upstream: its URL, transport, and the headers that carry its
 * credentials — the static header opened from its sealed column, and `secret_mappings` resolved from secret
 * references at request time (for the workspace the call acts in), as provider integrations resolve theirs.
 */
import { type SecretBox, type SecretMapping, type SecretResolver, setPath } from '@gateway/admin-kit';
import { Errors, type Json, type Row } from '@gateway/sdk';
import { authSecretAt, type McpTransport, type mcpIntegrations } from './tables.ts';

export type IntegrationRow = Row<typeof mcpIntegrations>;

export interface Upstream {
  readonly url: string;
  readonly transport: McpTransport;
  /** The credentials' headers (never shown, never logged). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A header name as RFC 9110 allows it. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A mapping's target must be `headers.<Header-Name>` (one header) or `headers` (a JSON object of headers). */
export function checkMappingTargets(mappings: readonly SecretMapping[]): void {
  const seen = new Set<string>();
  mappings.forEach((m, i) => {
    const param = `secret_mappings[${i}].target_field`;
    const [head, name, ...rest] = m.target_field.split('.');
    const ok = head === 'headers' && rest.length === 0 && (name === undefined || HEADER_NAME.test(name));
    if (!ok) throw Errors.badRequest(`${param} must be "headers.<Header-Name>" or "headers"`, param);
    if (name === undefined && m.value_format !== 'json') throw Errors.badRequest(`${param} "headers" needs value_format json (an object of headers)`, param);
    const key = m.target_field.toLowerCase();
    if (seen.has(key)) throw Errors.badRequest(`${param} ${m.target_field} is mapped twice`, param);
    seen.add(key);
  });
}

function headerValue(value: Json | undefined, field: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw Errors.upstreamInvalid('mcp', `The secret mapped to ${field} is not a header value`);
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
  const mappings = row.secret_mappings ?? [];
  if (mappings.length > 0) {
    const resolver = deps.secrets();
    if (!resolver) throw Errors.upstreamInvalid('mcp', 'This MCP integration reads secret references, and the secret-references plugin is not loaded');
    const values = await resolver.resolve(row.organisation_id, workspaceId, mappings);
    const tree: Record<string, Json> = {};
    for (const [field, value] of Object.entries(values)) setPath(tree, field, value);
    const mapped = tree.headers;
    if (mapped !== null && typeof mapped === 'object' && !Array.isArray(mapped))
      for (const [name, value] of Object.entries(mapped)) {
        if (!HEADER_NAME.test(name)) throw Errors.upstreamInvalid('mcp', `The secret mapped to headers names an invalid header ${JSON.stringify(name)}`);
        headers[name] = headerValue(value, `headers.${name}`);
      }
    else if (mapped !== undefined) throw Errors.upstreamInvalid('mcp', 'The secret mapped to headers is not an object of headers');
  }
  return { url: row.url, transport: row.transport, headers };
}
