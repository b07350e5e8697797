/**
 * Who may change MCP integrations and servers of a workspace: its admins; its managers while the security settings
 * managersWriteWsMcpIntegrations / managersWriteMcpServers are on (their default), not after they are switched off;
 * members never (they read). The proxy needs the `mcp_servers.invoke` scope: `mcp_servers.read` alone is refused.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type McpStack, uniqueSlug, UPSTREAM_TOKEN, useMcpStack } from './support.ts';

const SCOPES = ['mcp_integrations.read', 'mcp_integrations.write', 'mcp_servers.read', 'mcp_servers.write', 'mcp_servers.invoke'];

async function userKey(s: McpStack, role: 'admin' | 'manager' | 'member', scopes = SCOPES): Promise<string> {
  const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug(role)}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role }] });
  expect(user.status).toBe(201);
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `${role} key`, type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes });
  expect(key.status).toBe(201);
  return key.body.key;
}

for (const dialect of E2E_DIALECTS) {
  describe(`MCP permissions [${dialect}]`, () => {
    const get = useMcpStack(dialect);

    test('managers write while the settings are on; switched off, only admins do; members read', async () => {
      const s = get();
      const [admin, manager, member] = [await userKey(s, 'admin'), await userKey(s, 'manager'), await userKey(s, 'member')];
      const integration = (name: string) => ({ name, url: s.upstream.url, auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` } });

      const byManager = await s.admin<{ id: string }>('POST', '/mcp-integrations', integration('by manager'), manager);
      expect(byManager.status).toBe(201);
      expect((await s.admin('POST', '/mcp-integrations', integration('by member'), member)).status).toBe(403);
      expect((await s.admin('GET', `/mcp-integrations/${byManager.body.id}`, undefined, member)).status).toBe(200);
      const server = await s.admin<{ id: string; slug: string }>('POST', '/mcp-servers', { name: 'by manager', mcp_integration_id: byManager.body.id }, manager);
      expect(server.status).toBe(201);
      expect((await s.admin('POST', '/mcp-servers', { name: 'by member', mcp_integration_id: byManager.body.id }, member)).status).toBe(403);
      expect((await s.admin('GET', `/mcp-servers/${server.body.id}/metadata`, undefined, member)).status).toBe(200);

      expect((await s.admin('PUT', '/settings/security', { managersWriteWsMcpIntegrations: false, managersWriteMcpServers: false })).status).toBe(200);
      const refusedIntegration = await s.admin<{ error: { message: string } }>('PUT', `/mcp-integrations/${byManager.body.id}`, { name: 'renamed' }, manager);
      expect(refusedIntegration.status).toBe(403);
      expect(refusedIntegration.body.error.message).toContain('managersWriteWsMcpIntegrations');
      const refusedServer = await s.admin<{ error: { message: string } }>('PUT', `/mcp-servers/${server.body.id}`, { denied_tools: ['echo'] }, manager);
      expect(refusedServer.status).toBe(403);
      expect(refusedServer.body.error.message).toContain('managersWriteMcpServers');
      expect((await s.admin('PUT', `/mcp-servers/${server.body.id}`, { denied_tools: ['echo'] }, admin)).status).toBe(200);
      expect((await s.admin('PUT', `/mcp-integrations/${byManager.body.id}`, { name: 'renamed' }, admin)).status).toBe(200);

      // The member may still use the server (reading is not writing), and the admin's deny list holds for them.
      const { client } = await s.connect(server.body.slug, member);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('echo');
      await client.close();
      expect((await s.admin('PUT', '/settings/security', { managersWriteWsMcpIntegrations: null, managersWriteMcpServers: null })).status).toBe(200);
    });

    test('the proxy needs mcp_servers.invoke', async () => {
      const s = get();
      const reader = await userKey(s, 'member', ['mcp_servers.read']);
      const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', { name: 'scoped', url: s.upstream.url, auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` } });
      const server = await s.admin<{ slug: string }>('POST', '/mcp-servers', { name: 'scoped', mcp_integration_id: integration.body.id });
      const refused = await s.gw.handle(
        new Request(`http://gateway.test/v1/mcp/${server.body.slug}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': reader },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }),
      );
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('mcp_servers.invoke');
    });
  });
}
