/**
 * The MCP gateway end to end, with the official MCP SDK on both sides: an integration holding the upstream's
 * credential, a server synced on create (title, icons, name, version, protocol version, tools, resources, prompts),
 * and the official client through /v1/mcp/:slug — tools (one denied, one failing, one streaming progress and log
 * notifications before its result), resources, prompts, sessions mapped per client, and a request-log row per call.
 */
import { describe, expect, test } from 'bun:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { TEST_ADMIN_KEY, UPSTREAM_TOKEN, uniqueSlug, useMcpStack } from './support.ts';

type View = Record<string, unknown>;

for (const dialect of E2E_DIALECTS) {
  describe(`MCP proxy [${dialect}]`, () => {
    const get = useMcpStack(dialect);

    async function registered(denied: string[] = ['secret']) {
      const s = get();
      const integration = await s.admin<View>('POST', '/mcp-integrations', {
        name: 'Loopback',
        slug: uniqueSlug('loop'),
        url: s.upstream.url,
        auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
      });
      expect(integration.status).toBe(201);
      const server = await s.admin<View>('POST', '/mcp-servers', { name: 'Tools', slug: uniqueSlug('tools'), mcp_integration_id: integration.body.id, denied_tools: denied });
      expect(server.status).toBe(201);
      return { integration: integration.body, server: server.body };
    }

    test('create syncs the metadata; the integration shows its header masked; GET metadata has the detail', async () => {
      const s = get();
      const { integration, server } = await registered();
      expect(integration.auth).toEqual({ type: 'header', header_name: 'Authorization', header_value: '****' });
      expect(JSON.stringify(integration)).not.toContain(UPSTREAM_TOKEN);
      expect(server).toMatchObject({
        object: 'mcp_server',
        sync_status: 'synced',
        sync_error: null,
        title: 'Loopback Tools',
        server_name: 'loopback-tools',
        server_version: '2.3.4',
        protocol_version: '2025-11-25',
        icons: [{ src: 'https://example.com/icon.png', mimeType: 'image/png', sizes: ['48x48'] }],
        tools_count: 4,
      });
      const listed = await s.admin<{ data: View[] }>('GET', '/mcp-servers');
      expect(listed.body.data.find((v) => v.id === server.id)).toMatchObject({ title: 'Loopback Tools', sync_status: 'synced' });
      const meta = await s.admin<{ metadata: { tools: { name: string }[]; resources: { uri: string }[]; prompts: { name: string }[]; instructions: string } }>(
        'GET',
        `/mcp-servers/${server.id}/metadata`,
      );
      expect(meta.status).toBe(200);
      expect(meta.body.metadata.tools.map((t) => t.name).sort()).toEqual(['count', 'echo', 'fail', 'secret']);
      expect(meta.body.metadata.resources.map((r) => r.uri)).toEqual(['note://hello']);
      expect(meta.body.metadata.prompts.map((p) => p.name)).toEqual(['greet']);
      expect(meta.body.metadata.instructions).toBe('Tools for the gateway tests');
    });

    test('the official client through the gateway: tools, a streamed result with notifications, resources, prompts, the deny list, the log', async () => {
      const s = get();
      const { server } = await registered();
      const slug = String(server.slug);
      const { client, transport } = await s.connect(slug);
      const logs: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));

      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['count', 'echo', 'fail']);
      const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(echo.content).toEqual([{ type: 'text', text: 'echo: hi' }]);

      const progress: number[] = [];
      const counted = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
      expect(counted.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
      expect(progress).toEqual([1, 2, 3]);
      expect(logs).toEqual(['counted 1', 'counted 2', 'counted 3']);

      const failed = await client.callTool({ name: 'fail', arguments: {} });
      expect(failed.isError).toBe(true);
      await expect(client.callTool({ name: 'secret', arguments: {} })).rejects.toThrow(/not allowed/);

      const resources = await client.listResources();
      expect(resources.resources.map((r) => r.uri)).toEqual(['note://hello']);
      const read = await client.readResource({ uri: 'note://hello' });
      expect(read.contents).toEqual([{ uri: 'note://hello', text: 'hello from the upstream' }]);
      const prompt = await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
      expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Ada' });

      // The client's session is the gateway's own, mapped to the upstream's; the credential never came from the client.
      const clientSession = transport.sessionId;
      expect(clientSession).toBeString();
      expect(s.upstream.sessions).not.toContain(clientSession as string);
      expect(s.upstream.seenAuthorization.every((a) => a === `Bearer ${UPSTREAM_TOKEN}`)).toBe(true);

      // Another key may not use the session.
      const other = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'other', type: 'workspace-service', workspace_id: s.defaultWorkspace, scopes: ['mcp_servers.invoke'] });
      expect(other.status).toBe(201);
      const hijack = await s.gw.handle(
        new Request(`http://gateway.test/v1/mcp/${slug}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': other.body.key, 'mcp-session-id': clientSession as string },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        }),
      );
      expect(hijack.status).toBe(404);

      await transport.terminateSession();
      const after = await s.gw.handle(
        new Request(`http://gateway.test/v1/mcp/${slug}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': TEST_ADMIN_KEY, 'mcp-session-id': clientSession as string },
          body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }),
        }),
      );
      expect(after.status).toBe(404);
      await client.close();

      await s.gw.service(RequestLogServices.queue).flush();
      const rows = await s.db.query(
        `SELECT model, status, provider, provider_slug, error_code, metadata FROM request_logs WHERE endpoint = 'mcp.tools/call' AND provider_slug = '${slug}' ORDER BY created_at, id`,
      );
      const seen = rows.map((r) => {
        const metadata = (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) as Record<string, string>;
        return [r.model, Number(r.status), r.error_code, metadata.mcp_outcome, metadata.mcp_arguments_bytes];
      });
      expect(seen.sort()).toEqual(
        [
          ['count', 200, null, 'ok', String(JSON.stringify({ n: 3 }).length)],
          ['echo', 200, null, 'ok', String(JSON.stringify({ text: 'hi' }).length)],
          ['fail', 200, 'mcp_tool_error', 'tool_error', '2'],
          ['secret', 403, 'mcp_denied', 'denied', '2'],
        ].sort(),
      );
    });

    test('an allow list lets only its tools through', async () => {
      const s = get();
      const { server } = await registered([]);
      const updated = await s.admin<View>('PUT', `/mcp-servers/${server.id}`, { allowed_tools: ['echo'] });
      expect(updated.status).toBe(200);
      const { client } = await s.connect(String(server.slug));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      await expect(client.callTool({ name: 'count', arguments: { n: 1 } })).rejects.toThrow(/not allowed/);
      await client.close();
    });

    test('a sync the upstream refuses is recorded as failed with why; after the fix a manual sync records it synced', async () => {
      const s = get();
      const integration = await s.admin<View>('POST', '/mcp-integrations', {
        name: 'Wrong token',
        url: s.upstream.url,
        auth: { type: 'header', header_name: 'Authorization', header_value: 'Bearer wrong' },
      });
      const server = await s.admin<View>('POST', '/mcp-servers', { name: 'Refused', mcp_integration_id: integration.body.id });
      expect(server.status).toBe(201);
      expect(server.body.sync_status).toBe('failed');
      expect(String(server.body.sync_error)).toContain('unauthorised');
      // The right credential, then a manual sync: synced.
      const fixed = await s.admin('PUT', `/mcp-integrations/${integration.body.id}`, { auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` } });
      expect(fixed.status).toBe(200);
      const synced = await s.admin<View>('POST', `/mcp-servers/${server.body.id}/sync`);
      expect(synced.body).toMatchObject({ sync_status: 'synced', sync_error: null, server_name: 'loopback-tools' });
    });

    test('an upstream URL on a private address is refused (the outbound guard)', async () => {
      const s = get();
      const refused = await s.admin<{ error: { code: string } }>('POST', '/mcp-integrations', { name: 'Metadata', url: 'http://169.254.169.254/mcp' });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('forbidden_custom_host');
    });
  });
}
