/**
 * The MCP proxy keeps what it reads per call (the server by slug, its integration, the key's reader check) for
 * MCP_PROXY_CACHE_TTL_MS: a steady stream of tool calls reads each once per TTL, and a change made through the
 * administration API is seen by the next call in the same process.
 */
import { describe, expect, spyOn, test } from 'bun:test';
import { type Database, Services } from '@gateway/sdk';
import { UPSTREAM_TOKEN, uniqueSlug, useMcpStack } from './support.ts';

/** The tables the proxy reads per call (workspaces and their members: the reader check). */
const WATCHED = ['mcp_servers', 'mcp_integrations', 'workspaces', 'workspace_members'];

describe('MCP proxy reads [sqlite]', () => {
  // A TTL no loaded machine outlasts: the test counts reads, not time.
  const get = useMcpStack('sqlite', { MCP_PROXY_CACHE_TTL_MS: '600000' });

  test('ten tool calls read each table at most once; a PUT of the server is seen by the next call', async () => {
    const s = get();
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'Cached',
      slug: uniqueSlug('cached'),
      url: s.upstream.url,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('cached');
    const server = await s.admin<{ id: string }>('POST', '/mcp-servers', { name: 'Cached', slug, mcp_integration_id: integration.body.id });
    expect(server.status).toBe(201);

    const database = s.gw.plugins.registry.service(Services.database);
    const reads = new Map<string, number>();
    const select = database.select.bind(database) as Database['select'];
    const spy = spyOn(database, 'select').mockImplementation(((table, options) => {
      if (WATCHED.includes(table.name)) reads.set(table.name, (reads.get(table.name) ?? 0) + 1);
      return select(table, options);
    }) as Database['select']);
    try {
      const { client } = await s.connect(slug);
      for (let i = 0; i < 10; i++) expect((await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })).isError).toBeFalsy();
      // initialize, notifications/initialized and ten calls: twelve requests.
      for (const table of ['mcp_servers', 'mcp_integrations']) expect(reads.get(table) ?? 0).toBe(1);
      expect(reads.get('workspaces') ?? 0).toBeLessThanOrEqual(1);
      expect(reads.get('workspace_members') ?? 0).toBe(0);

      // A change through the administration API: the next call sees it.
      expect((await s.admin('PUT', `/mcp-servers/${server.body.id}`, { denied_tools: ['echo'] })).status).toBe(200);
      reads.clear();
      await expect(client.callTool({ name: 'echo', arguments: { text: 'now denied' } })).rejects.toThrow(/not allowed/);
      expect(reads.get('mcp_servers')).toBe(1);
      await client.close();
    } finally {
      spy.mockRestore();
    }
  }, 60_000);

  test('a key of a workspace that is archived is refused by the next call: the kept reader check is dropped', async () => {
    const s = get();
    const made = await s.admin<{ id: string }>('POST', '/workspaces', { name: `Archived ${uniqueSlug('ws')}` });
    expect(made.status).toBe(201);
    const workspace = made.body.id;
    const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'mcp caller', type: 'workspace-service', workspace_id: workspace, scopes: ['mcp_servers.invoke'] });
    expect(key.status).toBe(201);
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'Archived',
      workspace_id: workspace,
      url: s.upstream.url,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('archived');
    expect((await s.admin('POST', '/mcp-servers', { name: 'Archived', slug, workspace_id: workspace, mcp_integration_id: integration.body.id })).status).toBe(201);
    const { client } = await s.connect(slug, key.body.key);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'before' } })).isError).toBeFalsy();
    expect((await s.admin('PUT', `/workspaces/${workspace}`, { status: 'archived' })).status).toBe(200);
    await expect(client.callTool({ name: 'echo', arguments: { text: 'after' } })).rejects.toThrow(/No such MCP server/);
  }, 60_000);
});
