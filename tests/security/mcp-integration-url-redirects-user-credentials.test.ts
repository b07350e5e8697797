/**
 * An attacker inside the organisation: a workspace manager (who may write the workspace's MCP integrations by default)
 * changes the URL of an integration whose users connected with their own tokens, to an upstream the attacker runs,
 * hoping the proxy sends the members' tokens there. A new URL revokes every user connection to the integration's
 * servers, and an OAuth integration's stored client (client_secret) is not kept across a URL change, as the static
 * header value already was not.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type McpUpstream, startMcpUpstream } from '../mocks/mcp-upstream.ts';
import { type McpStack, uniqueSlug, UPSTREAM_TOKEN, useMcpStack } from '../mcp/support.ts';

const MEMBER_TOKEN = `Bearer ${UPSTREAM_TOKEN}`;

async function person(s: McpStack, role: 'manager' | 'member', scopes: string[]) {
  const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug(role)}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role }] });
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `${role} key`, type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes });
  expect(key.status).toBe(201);
  return { id: user.body.id, key: key.body.key };
}

const initialize = (s: McpStack, slug: string, key: string) =>
  s.gw.handle(
    new Request(`http://gateway.test/v1/mcp/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    }),
  );

describe('MCP integration URL change by a workspace manager [sqlite]', () => {
  const get = useMcpStack('sqlite');
  let attacker: McpUpstream;
  beforeAll(async () => {
    attacker = await startMcpUpstream('attacker-token');
  });
  afterAll(async () => {
    await attacker?.close();
  });

  test("members' own tokens are not sent to the new URL: their connections are revoked", async () => {
    const s = get();
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'Per user',
      url: s.upstream.url,
      workspace_id: s.defaultWorkspace,
      auth: { type: 'user_token', header_name: 'Authorization' },
    });
    expect(integration.status).toBe(201);
    const server = await s.admin<{ id: string; slug: string }>('POST', '/mcp-servers', { name: 'Per user', mcp_integration_id: integration.body.id, workspace_id: s.defaultWorkspace });
    expect(server.status).toBe(201);
    const member = await person(s, 'member', ['mcp_servers.read', 'mcp_servers.invoke']);
    const manager = await person(s, 'manager', ['mcp_integrations.read', 'mcp_integrations.write', 'mcp_servers.read']);
    expect((await s.admin('POST', `/mcp-servers/${server.body.id}/connections`, { token: MEMBER_TOKEN }, member.key)).status).toBe(201);
    expect((await initialize(s, server.body.slug, member.key)).status).toBe(200);

    const moved = await s.admin('PUT', `/mcp-integrations/${integration.body.id}`, { url: attacker.url }, manager.key);
    expect(moved.status).toBe(200);
    const after = await initialize(s, server.body.slug, member.key);
    expect(after.status).toBe(403);
    expect(attacker.seenAuthorization).not.toContain(MEMBER_TOKEN);
    expect((await s.admin<{ total: number }>('GET', `/mcp-servers/${server.body.id}/connections`, undefined, manager.key)).body.total).toBe(0);
  });

  test("an OAuth integration's stored client is not kept when the URL changes", async () => {
    const s = get();
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'OAuth',
      url: s.upstream.url,
      workspace_id: s.defaultWorkspace,
      auth: { type: 'oauth', client_id: 'gateway-client', client_secret: 'client-secret-entered-by-an-admin' },
    });
    expect(integration.status).toBe(201);
    const manager = await person(s, 'manager', ['mcp_integrations.read', 'mcp_integrations.write']);
    const moved = await s.admin<{ error: { param: string } }>('PUT', `/mcp-integrations/${integration.body.id}`, { url: attacker.url }, manager.key);
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('auth');
    // Entering the client again (the manager's own) is allowed.
    const reentered = await s.admin('PUT', `/mcp-integrations/${integration.body.id}`, { url: attacker.url, auth: { type: 'oauth', client_id: 'mine' } }, manager.key);
    expect(reentered.status).toBe(200);
  });
});
