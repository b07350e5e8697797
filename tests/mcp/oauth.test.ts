/**
 * OAuth 2.1 connections to an upstream that needs them: the gateway finds the authorization server from the
 * upstream's protected-resource metadata, hands the user an authorization URL (PKCE S256, state), exchanges the code
 * at its callback, and the user's calls through the proxy carry the issued token — refreshed once it expires; revoked,
 * the connection stops working. The official MCP client is the user's client.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type McpUpstream, startMcpUpstream } from '../mocks/mcp-upstream.ts';
import { type OAuthServer, startOAuthServer } from '../mocks/oauth-server.ts';
import { type McpStack, uniqueSlug, useMcpStack } from './support.ts';

const CLIENT = { id: 'gateway-client', secret: 'gateway-client-secret' };
const ISSUED = 'oauth-issued-access-token';
const REDIRECT = 'http://gateway.test/v1/mcp/oauth/callback';

describe('MCP OAuth connections [sqlite]', () => {
  const get = useMcpStack('sqlite', { MCP_OAUTH_REDIRECT_URL: REDIRECT });
  let as: OAuthServer;
  let upstream: McpUpstream;
  beforeAll(async () => {
    as = startOAuthServer(CLIENT, ISSUED);
    upstream = await startMcpUpstream(ISSUED, { authorizationServer: as.url });
  });
  afterAll(async () => {
    as?.stop();
    await upstream?.close();
  });

  async function member(s: McpStack) {
    const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug('oauth')}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role: 'member' }] });
    const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'oauth user', type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes: ['mcp_servers.read', 'mcp_servers.invoke'] });
    return { id: user.body.id, key: key.body.key };
  }

  test('authorize, call back, call with the issued token (refreshed when expired), revoke', async () => {
    const s = get();
    const integration = await s.admin<{ id: string; auth: unknown }>('POST', '/mcp-integrations', {
      name: 'OAuth upstream',
      url: upstream.url,
      auth: { type: 'oauth', client_id: CLIENT.id, client_secret: CLIENT.secret, scope: 'tools' },
    });
    expect(integration.status).toBe(201);
    expect(integration.body.auth).toEqual({ type: 'oauth' });
    const server = await s.admin<{ id: string; slug: string }>('POST', '/mcp-servers', { name: 'OAuth', mcp_integration_id: integration.body.id });
    const alice = await member(s);

    const started = await s.admin<{ authorization_url: string }>('POST', `/mcp-servers/${server.body.id}/connections/authorize`, undefined, alice.key);
    expect(started.status).toBe(200);
    const authorization = new URL(started.body.authorization_url);
    expect(authorization.origin).toBe(as.url);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('redirect_uri')).toBe(REDIRECT);
    // The user's browser: the authorization server approves and redirects to the gateway's callback.
    const approved = await fetch(authorization, { redirect: 'manual' });
    expect(approved.status).toBe(302);
    const callback = await s.gw.handle(new Request(approved.headers.get('location') as string));
    expect(callback.status).toBe(200);
    expect(await callback.text()).toContain('connected');
    // A state is used once.
    expect((await s.gw.handle(new Request(approved.headers.get('location') as string))).status).toBe(400);

    const listed = await s.admin<{ data: { user_id: string; kind: string }[] }>('GET', `/mcp-servers/${server.body.id}/connections`, undefined, alice.key);
    expect(listed.body.data).toMatchObject([{ user_id: alice.id, kind: 'oauth' }]);
    // The connection read the metadata the integration alone could not.
    expect((await s.admin<{ sync_status: string }>('GET', `/mcp-servers/${server.body.id}`)).body.sync_status).toBe('synced');
    const stored = await s.db.query(`SELECT secret FROM mcp_connections WHERE user_id = '${alice.id}'`);
    expect(String(stored[0]?.secret)).not.toContain(ISSUED);

    // The token was issued for 1 s: within the gateway's 5 s margin, so the first call refreshes it.
    const { client } = await s.connect(server.body.slug, alice.key);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'oauth' } })).content).toEqual([{ type: 'text', text: 'echo: oauth' }]);
    await client.close();
    expect(upstream.seenAuthorization.at(-1)).toBe(`Bearer ${ISSUED}`);
    expect(as.grants).toContain('refresh_token');

    expect((await s.admin('DELETE', `/mcp-servers/${server.body.id}/connections`, undefined, alice.key)).status).toBe(204);
    const revoked = await s.gw.handle(
      new Request(`http://gateway.test/v1/mcp/${server.body.slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': alice.key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    );
    expect(revoked.status).toBe(403);
  }, 30_000);
});
