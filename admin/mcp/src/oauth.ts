/**
 * OAuth 2.1 connections (MCP's authorization spec): a user asks for an authorization URL
 * (`POST /mcp-servers/:id/connections/authorize`); the gateway finds the upstream's authorization server (RFC 9728
 * protected-resource metadata, RFC 8414 server metadata), starts an authorization-code flow with PKCE (S256) for the
 * client registered with it (the integration's `client_id`, `client_secret`; without a client_id the gateway registers
 * itself first, oauth-registration.ts), and keeps the verifier in the state store for MCP_OAUTH_STATE_TTL_MS under a
 * random `state`. The authorization server sends the user's browser to MCP_OAUTH_REDIRECT_URL
 * (`…/v1/mcp/oauth/callback`), where the code is exchanged and the tokens sealed as the user's connection; the proxy
 * sends the access token, refreshed with the refresh token once expired. Every request to the upstream and its
 * authorization server goes through the outbound guard.
 */
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Errors, eq, type OutboundGuard, type StateStore } from '@gateway/sdk';
import type { SecretBox } from '@gateway/admin-kit';
import type { Database } from '@gateway/sdk';
import { loadMcpAuth } from './mcp-sdk.ts';
import { type ReadyClient, registerGateway, type StoredClient, usableClient } from './oauth-registration.ts';
import { authSecretAt, connectionSecretAt, mcpConnections } from './tables.ts';
import type { IntegrationRow } from './upstream.ts';

/** A client the token endpoint knows: configured, or registered by the gateway. */
export type OAuthClient = ReadyClient;

export interface OAuthTokens {
  access_token: string;
  refresh_token?: string;
  /** Epoch milliseconds; absent: no expiry given. */
  expires_at?: number;
}

interface Pending {
  serverId: string;
  userId: string;
  organisationId: string;
  workspaceId: string;
  verifier: string;
  /** The client the flow was started for (a registered one may be replaced meanwhile). */
  clientId: string;
  authorizationServer: string;
  metadata: AuthorizationServerMetadata | undefined;
  resource: string;
  redirectUrl: string;
}

export interface OAuthDeps {
  database: Database;
  guard: OutboundGuard;
  state: StateStore;
  box: () => SecretBox;
  redirectUrl: string | undefined;
  stateTtlMs: number;
}

const stateKey = (state: string) => `mcp:oauth:${state}`;

/** The integration's stored client: configured, registered dynamically, or (no client_id) not registered yet. */
function storedClientOf(row: IntegrationRow, box: () => SecretBox): StoredClient {
  if (row.auth_type !== 'oauth' || !row.auth_secret) throw Errors.badRequest('This MCP server does not take OAuth connections', 'mcpServerId');
  return box().openJson<StoredClient>(row.auth_secret, authSecretAt(row.id));
}

export function oauthClientOf(row: IntegrationRow, box: () => SecretBox): OAuthClient {
  const stored = storedClientOf(row, box);
  if (!stored.client_id) throw Errors.badRequest('This MCP integration has no OAuth client yet: a user connects first (the gateway then registers itself)', 'mcpServerId');
  return { ...stored, client_id: stored.client_id };
}

export class McpOAuth {
  private readonly fetchFn: (url: string | URL, init?: RequestInit) => Promise<Response>;

  constructor(private readonly deps: OAuthDeps) {
    this.fetchFn = (url, init) => deps.guard.fetch(url, init);
  }

  /**
   * The callback URL: MCP_OAUTH_REDIRECT_URL, else the one the request names, else this gateway's own as the request reached it
   * (the authorization server only redirects to a URI registered for the client, so a forged Host goes nowhere).
   */
  private redirect(requestOrigin: string | undefined): string {
    if (this.deps.redirectUrl) return this.deps.redirectUrl;
    if (!requestOrigin) throw Errors.badRequest('OAuth connections need MCP_OAUTH_REDIRECT_URL (this gateway\'s /v1/mcp/oauth/callback)', null);
    if (requestOrigin.endsWith('/v1/mcp/oauth/callback')) return requestOrigin;
    return new URL('/v1/mcp/oauth/callback', requestOrigin).toString();
  }

  /** The URL to send the user to, for their connection to `serverId`. */
  async authorize(integration: IntegrationRow, server: { id: string; organisation_id: string; workspace_id: string }, userId: string, requestOrigin?: string): Promise<string> {
    const stored = storedClientOf(integration, this.deps.box);
    const redirectUrl = this.redirect(requestOrigin);
    const { discoverOAuthServerInfo, startAuthorization } = await loadMcpAuth();
    let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
    try {
      info = await discoverOAuthServerInfo(integration.url, { fetchFn: this.fetchFn });
    } catch (error) {
      throw Errors.upstreamUnreachable('mcp oauth', error instanceof Error ? error.message : String(error));
    }
    const client =
      usableClient(stored, info.authorizationServerUrl, redirectUrl) ??
      (await registerGateway({ ...this.deps, fetchFn: this.fetchFn }, integration, stored, info.authorizationServerUrl, info.authorizationServerMetadata, redirectUrl));
    const state = crypto.randomUUID();
    const { authorizationUrl, codeVerifier } = await startAuthorization(info.authorizationServerUrl, {
      metadata: info.authorizationServerMetadata,
      clientInformation: client,
      redirectUrl,
      scope: client.scope,
      state,
      resource: new URL(integration.url),
    });
    const pending: Pending = {
      serverId: server.id,
      userId,
      organisationId: server.organisation_id,
      workspaceId: server.workspace_id,
      verifier: codeVerifier,
      clientId: client.client_id,
      authorizationServer: info.authorizationServerUrl,
      metadata: info.authorizationServerMetadata,
      resource: integration.url,
      redirectUrl,
    };
    await this.deps.state.set(stateKey(state), JSON.stringify(pending), this.deps.stateTtlMs);
    return authorizationUrl.toString();
  }

  /** The callback: the code exchanged for tokens, sealed as the user's connection. One use per state. */
  async complete(code: string, state: string, integrationOf: (serverId: string) => Promise<IntegrationRow | undefined>): Promise<Pending & { accessToken: string }> {
    const raw = await this.deps.state.get(stateKey(state));
    if (!raw) throw Errors.badRequest('Unknown or expired state: start the connection again', 'state');
    await this.deps.state.del(stateKey(state));
    const pending = JSON.parse(raw) as Pending;
    const integration = await integrationOf(pending.serverId);
    if (!integration) throw Errors.notFound('The MCP server is gone');
    const client = oauthClientOf(integration, this.deps.box);
    if (pending.clientId !== undefined && client.client_id !== pending.clientId)
      throw Errors.conflict('The MCP integration\'s OAuth client changed while you were authorising (it was registered again or reconfigured): start the connection again');
    const { exchangeAuthorization } = await loadMcpAuth();
    let tokens: Awaited<ReturnType<typeof exchangeAuthorization>>;
    try {
      tokens = await exchangeAuthorization(pending.authorizationServer, {
        metadata: pending.metadata,
        clientInformation: client,
        authorizationCode: code,
        codeVerifier: pending.verifier,
        redirectUri: pending.redirectUrl,
        resource: new URL(pending.resource),
        fetchFn: this.fetchFn,
      });
    } catch (error) {
      throw Errors.upstreamInvalid('mcp oauth', `the authorization server refused the code: ${error instanceof Error ? error.message : String(error)}`);
    }
    await this.save(pending, tokens);
    return { ...pending, accessToken: tokens.access_token };
  }

  private async save(pending: Pending, tokens: { access_token: string; refresh_token?: string; expires_in?: number }): Promise<void> {
    const { database } = this.deps;
    const value: OAuthTokens = {
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token,
      expires_at: tokens.expires_in === undefined ? undefined : Date.now() + tokens.expires_in * 1000,
    };
    const now = Date.now();
    const [existing] = await database.select(mcpConnections, { where: (c) => eq(c.mcp_server_id, pending.serverId), fresh: true }).then((rows) => rows.filter((r) => r.user_id === pending.userId));
    const id = existing?.id ?? crypto.randomUUID();
    const secret = this.deps.box().sealJson(value, connectionSecretAt(id));
    if (existing) await database.update(mcpConnections, { kind: 'oauth', secret, updated_at: now }, (c) => eq(c.id, id));
    else
      await database.insert(mcpConnections, {
        id,
        organisation_id: pending.organisationId,
        workspace_id: pending.workspaceId,
        mcp_server_id: pending.serverId,
        user_id: pending.userId,
        kind: 'oauth',
        secret,
        created_at: now,
        updated_at: now,
      });
  }

  /** The access token of an OAuth connection, refreshed first when it has expired (and a refresh token is kept). */
  async accessToken(integration: IntegrationRow, connectionId: string, sealed: string): Promise<string> {
    const tokens = this.deps.box().openJson<OAuthTokens>(sealed, connectionSecretAt(connectionId));
    if (tokens.expires_at === undefined || tokens.expires_at > Date.now() + 5_000 || !tokens.refresh_token) return tokens.access_token;
    const client = oauthClientOf(integration, this.deps.box);
    const { discoverOAuthServerInfo, refreshAuthorization } = await loadMcpAuth();
    const info = await discoverOAuthServerInfo(integration.url, { fetchFn: this.fetchFn });
    const fresh = await refreshAuthorization(info.authorizationServerUrl, {
      metadata: info.authorizationServerMetadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token,
      resource: new URL(integration.url),
      fetchFn: this.fetchFn,
    });
    const value: OAuthTokens = {
      access_token: fresh.access_token,
      refresh_token: fresh.refresh_token ?? tokens.refresh_token,
      expires_at: fresh.expires_in === undefined ? undefined : Date.now() + fresh.expires_in * 1000,
    };
    await this.deps.database.update(mcpConnections, { secret: this.deps.box().sealJson(value, connectionSecretAt(connectionId)), updated_at: Date.now() }, (c) => eq(c.id, connectionId));
    return value.access_token;
  }
}
