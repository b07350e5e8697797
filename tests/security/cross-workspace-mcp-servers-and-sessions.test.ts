/**
 * An attacker inside the organisation: a key of workspace B calling workspace A's MCP server (whose integration holds
 * a static credential) by its slug, or reading and revoking its connections by id; and a second key of workspace A
 * reusing the first key's MCP session id. Each is refused and the upstream never sees the caller.
 */
import { describe, expect, test } from 'bun:test';
import { type McpStack, uniqueSlug, UPSTREAM_TOKEN, useMcpStack } from '../mcp/support.ts';

const SCOPES = ['mcp_servers.read', 'mcp_servers.invoke'];

async function serviceKey(s: McpStack, workspaceId: string) {
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: uniqueSlug('svc'), type: 'workspace-service', workspace_id: workspaceId, scopes: SCOPES });
  expect(key.status).toBe(201);
  return key.body.key;
}

const rpc = (s: McpStack, slug: string, key: string, body: unknown, session?: string) =>
  s.gw.handle(
    new Request(`http://gateway.test/v1/mcp/${slug}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-gateway-api-key': key,
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    }),
  );

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };

describe('cross-workspace MCP servers and sessions [sqlite]', () => {
  const get = useMcpStack('sqlite');

  test("a key of B cannot call A's server by slug nor see its connections; another key of A cannot take over a session", async () => {
    const s = get();
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'A upstream',
      url: s.upstream.url,
      workspace_id: s.defaultWorkspace,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const server = await s.admin<{ id: string; slug: string }>('POST', '/mcp-servers', { name: 'A tools', mcp_integration_id: integration.body.id, workspace_id: s.defaultWorkspace });
    expect(server.status).toBe(201);
    const wsB = await s.admin<{ id: string }>('POST', '/workspaces', { name: 'B', slug: uniqueSlug('b') });
    const [keyA1, keyA2, keyB] = [await serviceKey(s, s.defaultWorkspace), await serviceKey(s, s.defaultWorkspace), await serviceKey(s, wsB.body.id)];

    const seen = s.upstream.seenAuthorization.length;
    expect((await rpc(s, server.body.slug, keyB, INITIALIZE)).status).toBe(404);
    expect(s.upstream.seenAuthorization.length).toBe(seen);
    expect((await s.admin('GET', `/mcp-servers/${server.body.id}/connections`, undefined, keyB)).status).toBe(404);
    expect((await s.admin('GET', `/mcp-servers/${server.body.id}`, undefined, keyB)).status).toBe(404);

    const opened = await rpc(s, server.body.slug, keyA1, INITIALIZE);
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    await opened.text();
    const before = s.upstream.seenAuthorization.length;
    const taken = await rpc(s, server.body.slug, keyA2, CALL, session ?? '');
    expect(taken.status).toBe(404);
    expect(await taken.text()).not.toContain('echo: x');
    expect(s.upstream.seenAuthorization.length).toBe(before);
    // The session's own key goes on.
    expect((await rpc(s, server.body.slug, keyA1, CALL, session ?? '')).status).toBe(200);
  });
});
