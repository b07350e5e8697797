/**
 * Dynamic client registration (RFC 7591): an OAuth integration saved without a client_id has the gateway register
 * itself at the registration_endpoint its upstream's authorization server advertises (RFC 9728 → RFC 8414 metadata),
 * then run the PKCE flow with the registered client — confidential (client_secret_basic) or public (none), as the
 * registration answered — and reuse that client for the next user. A refused registration, or an authorization server
 * that offers none, is said plainly. The official MCP client is the user's client.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { type McpUpstream, startMcpUpstream } from '../mocks/mcp-upstream.ts';
import { type OAuthServer, startOAuthServer } from '../mocks/oauth-server.ts';
import { type McpStack, uniqueSlug, useMcpStack } from './support.ts';

const STATIC_CLIENT = { id: 'not-used-here', secret: 'not-used-here' };
const ISSUED = 'dcr-issued-access-token';
const REDIRECT = 'http://gateway.test/v1/mcp/oauth/callback';

interface Upstreams {
  as: OAuthServer;
  upstream: McpUpstream;
}

describe('MCP OAuth dynamic client registration [sqlite]', () => {
  const get = useMcpStack('sqlite', { MCP_OAUTH_REDIRECT_URL: REDIRECT });
  const started: Upstreams[] = [];
  async function upstreams(options: Parameters<typeof startOAuthServer>[2]): Promise<Upstreams> {
    const as = startOAuthServer(STATIC_CLIENT, ISSUED, options);
    const upstream = await startMcpUpstream(ISSUED, { authorizationServer: as.url });
    started.push({ as, upstream });
    return { as, upstream };
  }
  afterAll(async () => {
    for (const { as, upstream } of started) {
      as.stop();
      await upstream.close();
    }
  });

  async function member(s: McpStack) {
    const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug('dcr')}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role: 'member' }] });
    const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'dcr user', type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes: ['mcp_servers.read', 'mcp_servers.invoke'] });
    return { id: user.body.id, key: key.body.key };
  }

  async function serverAt(s: McpStack, upstream: McpUpstream) {
    const integration = await s.admin<{ id: string; auth: unknown }>('POST', '/mcp-integrations', { name: uniqueSlug('DCR upstream'), url: upstream.url, auth: { type: 'oauth', scope: 'tools' } });
    expect(integration.status).toBe(201);
    expect(integration.body.auth).toEqual({ type: 'oauth' });
    const server = await s.admin<{ id: string; slug: string }>('POST', '/mcp-servers', { name: uniqueSlug('DCR'), mcp_integration_id: integration.body.id });
    expect(server.status).toBe(201);
    return { integrationId: integration.body.id, serverId: server.body.id, slug: server.body.slug };
  }

  /** The user's browser: authorize URL, the authorization server's approval, the gateway's callback. */
  async function connect(s: McpStack, serverId: string, key: string): Promise<URL> {
    const started = await s.admin<{ authorization_url: string }>('POST', `/mcp-servers/${serverId}/connections/authorize`, undefined, key);
    expect(started.status).toBe(200);
    const authorization = new URL(started.body.authorization_url);
    const approved = await fetch(authorization, { redirect: 'manual' });
    expect(approved.status).toBe(302);
    const callback = await s.gw.handle(new Request(approved.headers.get('location') as string));
    expect(callback.status).toBe(200);
    return authorization;
  }

  for (const authMethod of ['client_secret_basic', 'none'] as const) {
    test(`registers once (${authMethod}), connects two users with the registered client, calls a tool with the issued token`, async () => {
      const s = get();
      const { as, upstream } = await upstreams({ registration: { authMethod } });
      const { integrationId, serverId, slug } = await serverAt(s, upstream);
      const alice = await member(s);
      const bob = await member(s);

      const first = await connect(s, serverId, alice.key);
      expect(as.registrations).toHaveLength(1);
      expect(as.registrations[0]).toMatchObject({
        client_name: 'AI Gateway (MCP)',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'tools',
      });
      const clientId = first.searchParams.get('client_id') as string;
      expect(clientId).toStartWith('registered-');
      expect(first.searchParams.get('code_challenge_method')).toBe('S256');
      expect(as.tokenClients).toEqual([{ client_id: clientId, method: authMethod }]);

      // Stored sealed, and reused for the next user: no second registration.
      const stored = await s.db.query(`SELECT auth_secret FROM mcp_integrations WHERE id = '${integrationId}'`);
      expect(String(stored[0]?.auth_secret)).not.toContain(clientId);
      const second = await connect(s, serverId, bob.key);
      expect(as.registrations).toHaveLength(1);
      expect(second.searchParams.get('client_id')).toBe(clientId);

      // The first call refreshes the 1 s token with the registered client, then reaches the tool with it.
      const { client } = await s.connect(slug, alice.key);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'registered' } })).content).toEqual([{ type: 'text', text: 'echo: registered' }]);
      await client.close();
      expect(upstream.seenAuthorization.at(-1)).toBe(`Bearer ${ISSUED}`);
      expect(as.grants).toContain('refresh_token');
      expect(as.tokenClients.every((c) => c.client_id === clientId && c.method === authMethod)).toBe(true);
    }, 30_000);
  }

  test('an authorisation started for one client and called back after the client changed is refused (409), not exchanged', async () => {
    const s = get();
    const { as, upstream } = await upstreams({ registration: { authMethod: 'none' } });
    const { integrationId, serverId } = await serverAt(s, upstream);
    const alice = await member(s);
    const started = await s.admin<{ authorization_url: string }>('POST', `/mcp-servers/${serverId}/connections/authorize`, undefined, alice.key);
    const approved = await fetch(new URL(started.body.authorization_url), { redirect: 'manual' });
    // Meanwhile an administrator gives the integration a client of their own.
    expect((await s.admin('PUT', `/mcp-integrations/${integrationId}`, { auth: { type: 'oauth', client_id: 'configured-later' } })).status).toBe(200);
    const callback = await s.gw.handle(new Request(approved.headers.get('location') as string));
    expect(callback.status).toBe(409);
    expect(as.grants).toEqual([]);
  }, 30_000);

  test('a refused registration is answered 502 with the authorization server\'s error; no registration endpoint: 400 naming auth.client_id', async () => {
    const s = get();
    const alice = await member(s);
    const refusing = await upstreams({ registration: { authMethod: 'none', refuse: 'redirect_uris must use https' } });
    const { serverId } = await serverAt(s, refusing.upstream);
    const refused = await s.admin<{ error: { code: string; message: string } }>('POST', `/mcp-servers/${serverId}/connections/authorize`, undefined, alice.key);
    expect(refused.status).toBe(502);
    expect(refused.body.error.message).toContain('dynamic client registration');
    expect(refused.body.error.message).toContain('invalid_client_metadata: redirect_uris must use https');
    expect(refusing.as.registrations).toHaveLength(1);

    const without = await upstreams(undefined);
    const other = await serverAt(s, without.upstream);
    const none = await s.admin<{ error: { param: string; message: string } }>('POST', `/mcp-servers/${other.serverId}/connections/authorize`, undefined, alice.key);
    expect(none.status).toBe(400);
    expect(none.body.error.param).toBe('auth.client_id');
    expect(none.body.error.message).toContain('no dynamic client registration');
  }, 30_000);
});
