/**
 * Per-user credentials (auth type `user_token`): each user connects with their own token, sealed at rest and never
 * shown; the proxy sends the caller's own (a user without one, or a service key, is refused before any upstream
 * call); connecting reads the metadata the integration alone could not; users list and revoke their own
 * connections, the workspace's managers and admins anyone's.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type McpStack, uniqueSlug, UPSTREAM_TOKEN, useMcpStack } from './support.ts';

const SCOPES = ['mcp_servers.read', 'mcp_servers.invoke'];

async function person(s: McpStack, role: 'manager' | 'member') {
  const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug(role)}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role }] });
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `${role} key`, type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes: SCOPES });
  expect(key.status).toBe(201);
  return { id: user.body.id, key: key.body.key };
}

const rpc = (s: McpStack, slug: string, key: string) =>
  s.gw.handle(
    new Request(`http://gateway.test/v1/mcp/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    }),
  );

for (const dialect of E2E_DIALECTS) {
  describe(`MCP user connections [${dialect}]`, () => {
    const get = useMcpStack(dialect);

    test('each user calls with their own credential; listing and revoking by role', async () => {
      const s = get();
      const integration = await s.admin<{ id: string; auth: unknown }>('POST', '/mcp-integrations', { name: 'Per user', url: s.upstream.url, auth: { type: 'user_token', header_name: 'Authorization' } });
      expect(integration.body.auth).toEqual({ type: 'user_token', header_name: 'Authorization' });
      const server = await s.admin<{ id: string; slug: string; sync_status: string }>('POST', '/mcp-servers', { name: 'Per user', mcp_integration_id: integration.body.id });
      expect(server.body.sync_status).toBe('failed'); // no credential of its own
      const [alice, bob, manager] = [await person(s, 'member'), await person(s, 'member'), await person(s, 'manager')];
      const seenBefore = s.upstream.seenAuthorization.length;

      const none = await rpc(s, server.body.slug, alice.key);
      expect(none.status).toBe(403);
      expect(((await none.json()) as { error: { message: string } }).error.message).toContain('connections');
      expect(s.upstream.seenAuthorization.length).toBe(seenBefore);

      const connected = await s.admin<Record<string, unknown>>('POST', `/mcp-servers/${server.body.id}/connections`, { token: `Bearer ${UPSTREAM_TOKEN}` }, alice.key);
      expect(connected.status).toBe(201);
      expect(connected.body).toMatchObject({ object: 'mcp_connection', user_id: alice.id, kind: 'token' });
      expect(JSON.stringify(connected.body)).not.toContain(UPSTREAM_TOKEN);
      const stored = await s.db.query(`SELECT secret FROM mcp_connections WHERE user_id = '${alice.id}'`);
      expect(String(stored[0]?.secret)).not.toContain(UPSTREAM_TOKEN);
      expect((await s.admin<{ sync_status: string }>('GET', `/mcp-servers/${server.body.id}`)).body.sync_status).toBe('synced');

      const { client } = await s.connect(server.body.slug, alice.key);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'mine' } })).content).toEqual([{ type: 'text', text: 'echo: mine' }]);
      await client.close();

      // Bob's own (wrong) token is what goes upstream for Bob.
      expect((await s.admin('POST', `/mcp-servers/${server.body.id}/connections`, { token: 'Bearer bobs-token' }, bob.key)).status).toBe(201);
      expect((await rpc(s, server.body.slug, bob.key)).status).toBe(401);
      expect(s.upstream.seenAuthorization.at(-1)).toBe('Bearer bobs-token');
      // A service key has no user, so no connection.
      const service = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'svc', type: 'workspace-service', workspace_id: s.defaultWorkspace, scopes: SCOPES });
      expect((await rpc(s, server.body.slug, service.body.key)).status).toBe(403);

      const own = await s.admin<{ data: { user_id: string }[]; total: number }>('GET', `/mcp-servers/${server.body.id}/connections`, undefined, alice.key);
      expect(own.body.data.map((c) => c.user_id)).toEqual([alice.id]);
      expect((await s.admin('GET', `/mcp-servers/${server.body.id}/connections?user_id=${bob.id}`, undefined, alice.key)).status).toBe(403);
      const all = await s.admin<{ data: unknown[]; total: number }>('GET', `/mcp-servers/${server.body.id}/connections?page_size=1`, undefined, manager.key);
      expect({ shown: all.body.data.length, total: all.body.total }).toEqual({ shown: 1, total: 2 });

      expect((await s.admin('DELETE', `/mcp-servers/${server.body.id}/connections?user_id=${bob.id}`, undefined, alice.key)).status).toBe(403);
      expect((await s.admin('DELETE', `/mcp-servers/${server.body.id}/connections?user_id=${bob.id}`, undefined, manager.key)).status).toBe(204);
      expect((await s.admin('DELETE', `/mcp-servers/${server.body.id}/connections`, undefined, alice.key)).status).toBe(204);
      expect((await rpc(s, server.body.slug, alice.key)).status).toBe(403);
      expect((await s.admin<{ total: number }>('GET', `/mcp-servers/${server.body.id}/connections`, undefined, manager.key)).body.total).toBe(0);
    });
  });
}
