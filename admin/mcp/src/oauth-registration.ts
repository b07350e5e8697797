/**
 * Dynamic client registration (RFC 7591, as MCP's authorization spec describes): an OAuth integration saved without
 * a `client_id` has the gateway register itself with the upstream's authorization server, at the `registration_endpoint`
 * its RFC 8414 metadata names, the first time a user connects. The returned client (client_id, and client_secret when
 * one is issued) is sealed in the integration's `auth_secret` like a configured client, and reused until the callback
 * URL or the authorization server changes or the secret expires; then the gateway registers again.
 */
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { SecretBox } from '@gateway/admin-kit';
import { and, type Database, eq, Errors, isNull } from '@gateway/sdk';
import { loadMcpAuth } from './mcp-sdk.ts';
import { authSecretAt, mcpIntegrations } from './tables.ts';
import type { IntegrationRow } from './upstream.ts';

/** The name the gateway registers under. */
export const CLIENT_NAME = 'AI Gateway (MCP)';

/** What `auth_secret` holds for an OAuth integration: the configured client, or the one registered dynamically. */
export interface StoredClient {
  client_id?: string;
  client_secret?: string;
  scope?: string;
  /** As the authorization server returned it at registration (the SDK authenticates to the token endpoint so). */
  token_endpoint_auth_method?: string;
  /** Epoch seconds; 0 or absent: the secret does not expire (RFC 7591 §3.2.1). */
  client_secret_expires_at?: number;
  /** Set for a registered client: where it was registered, and for which callback. */
  registered_for?: { authorization_server: string; redirect_uri: string };
}

/** A stored client with its id: one the token endpoint knows. */
export type ReadyClient = StoredClient & { client_id: string };

export interface RegistrationDeps {
  database: Database;
  box: () => SecretBox;
  fetchFn: (url: string | URL, init?: RequestInit) => Promise<Response>;
}

const describe = (error: unknown, OAuthError: typeof import('@modelcontextprotocol/sdk/server/auth/errors.js').OAuthError) =>
  error instanceof OAuthError ? `${error.errorCode}${error.message ? `: ${error.message}` : ''}` : error instanceof Error ? error.message : String(error);

/** The stored client when it can be used for this authorization server and callback. */
export function usableClient(stored: StoredClient, authorizationServer: string, redirectUrl: string): ReadyClient | undefined {
  if (!isReady(stored)) return undefined;
  const registered = stored.registered_for;
  if (!registered) return stored; // configured by an administrator: used as it is
  if (registered.authorization_server !== authorizationServer || registered.redirect_uri !== redirectUrl) return undefined;
  if (stored.client_secret_expires_at && stored.client_secret_expires_at * 1000 <= Date.now() + 60_000) return undefined;
  return stored;
}

const isReady = (client: StoredClient): client is ReadyClient => typeof client.client_id === 'string' && client.client_id !== '';

/** The authentication the gateway asks for: a secret when the token endpoint takes one, else a public client. */
function wantedAuthMethod(metadata: AuthorizationServerMetadata): string {
  const supported = metadata.token_endpoint_auth_methods_supported;
  // RFC 8414 §2: an absent list means client_secret_basic.
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('none')) return 'none';
  return supported.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic';
}

/**
 * Registers the gateway at `authorizationServer` for `redirectUrl`, seals the answer in the integration's row and
 * answers it. When another request stored a registration meanwhile (the row's sealed value changed), that one is used.
 */
export async function registerGateway(
  deps: RegistrationDeps,
  integration: IntegrationRow,
  stored: StoredClient,
  authorizationServer: string,
  metadata: AuthorizationServerMetadata | undefined,
  redirectUrl: string,
): Promise<ReadyClient> {
  if (!metadata?.registration_endpoint)
    throw Errors.badRequest(
      `This MCP integration has no client_id and its authorization server (${authorizationServer}) offers no dynamic client registration (no registration_endpoint in its metadata): set auth.client_id`,
      'auth.client_id',
    );
  const { registerClient, OAuthError } = await loadMcpAuth();
  let answer: Awaited<ReturnType<typeof registerClient>>;
  try {
    answer = await registerClient(authorizationServer, {
      metadata,
      clientMetadata: {
        client_name: CLIENT_NAME,
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: wantedAuthMethod(metadata),
      },
      scope: stored.scope,
      fetchFn: deps.fetchFn,
    });
  } catch (error) {
    throw Errors.upstreamInvalid('mcp oauth', `dynamic client registration at ${metadata.registration_endpoint} failed: ${describe(error, OAuthError)}`);
  }
  const client: ReadyClient = {
    client_id: answer.client_id,
    client_secret: answer.client_secret,
    scope: stored.scope,
    token_endpoint_auth_method: answer.token_endpoint_auth_method ?? (answer.client_secret ? 'client_secret_basic' : 'none'),
    client_secret_expires_at: answer.client_secret_expires_at,
    registered_for: { authorization_server: authorizationServer, redirect_uri: redirectUrl },
  };
  const sealed = deps.box().sealJson(client, authSecretAt(integration.id));
  const before = integration.auth_secret;
  const written = await deps.database.update(mcpIntegrations, { auth_secret: sealed }, (c) =>
    and(eq(c.id, integration.id), before === null ? isNull(c.auth_secret) : eq(c.auth_secret, before)),
  );
  if (written > 0) return client;
  // Another connection registered first: its client is the one kept (ours is simply not used).
  const [now] = await deps.database.select(mcpIntegrations, { where: (c) => eq(c.id, integration.id), limit: 1, fresh: true });
  const theirs = now?.auth_secret ? usableClient(deps.box().openJson<StoredClient>(now.auth_secret, authSecretAt(integration.id)), authorizationServer, redirectUrl) : undefined;
  if (!theirs) throw Errors.conflict('The MCP integration changed while the gateway registered with its authorization server; try again');
  return theirs;
}
