/**
 * An upstream on the older HTTP+SSE transport (the official SDK's SSEServerTransport): its metadata synced with the
 * SSE client transport, and the official streamable-HTTP client served through the gateway's bridge — tools (the
 * deny list holding), a streamed result with progress and log notifications, resources, prompts, the end of the
 * session, and a log row per tool call. On SQLite: the bridge keeps nothing in the database that MariaDB would
 * keep differently (tests/mcp/proxy.test.ts runs the stored side on both).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { type McpUpstream, startMcpSseUpstream } from '../mocks/mcp-upstream.ts';
import { UPSTREAM_TOKEN, uniqueSlug, useMcpStack } from './support.ts';

describe('MCP proxy to an SSE-transport upstream [sqlite]', () => {
  const get = useMcpStack('sqlite');
  let sse: McpUpstream;
  beforeAll(async () => {
    sse = await startMcpSseUpstream(UPSTREAM_TOKEN);
  });
  afterAll(async () => {
    await sse?.close();
  });

  test('synced over SSE, then used through the gateway with the streamable HTTP client', async () => {
    const s = get();
    const integration = await s.admin<{ id: string }>('POST', '/mcp-integrations', {
      name: 'Old server',
      url: sse.url,
      transport: 'sse',
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('old');
    const server = await s.admin<Record<string, unknown>>('POST', '/mcp-servers', { name: 'Old', slug, mcp_integration_id: integration.body.id, denied_tools: ['secret'] });
    expect(server.body).toMatchObject({ sync_status: 'synced', server_name: 'loopback-tools', server_version: '2.3.4', title: 'Loopback Tools', tools_count: 4 });

    const { client, transport } = await s.connect(slug);
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['count', 'echo', 'fail']);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'old' } })).content).toEqual([{ type: 'text', text: 'echo: old' }]);
    const progress: number[] = [];
    const counted = await client.callTool({ name: 'count', arguments: { n: 2 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(counted.content).toEqual([{ type: 'text', text: 'counted to 2' }]);
    expect(progress).toEqual([1, 2]);
    expect(logs).toEqual(['counted 1', 'counted 2']);
    await expect(client.callTool({ name: 'secret', arguments: {} })).rejects.toThrow(/not allowed/);
    expect((await client.readResource({ uri: 'note://hello' })).contents).toEqual([{ uri: 'note://hello', text: 'hello from the upstream' }]);
    expect((await client.getPrompt({ name: 'greet', arguments: { who: 'Bob' } })).messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Bob' });
    expect(sse.seenAuthorization.every((a) => a === `Bearer ${UPSTREAM_TOKEN}`)).toBe(true);

    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    const after = await s.gw.handle(
      new Request(`http://gateway.test/v1/mcp/${slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': 'gw-test-admin-key-0123456789abcdef', 'mcp-session-id': sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
      }),
    );
    expect(after.status).toBe(404);
    await client.close();

    await s.gw.service(RequestLogServices.queue).flush();
    const rows = await s.db.query(`SELECT model, status, error_code FROM request_logs WHERE endpoint = 'mcp.tools/call' AND provider_slug = '${slug}'`);
    expect(rows.map((r) => `${r.model} ${r.status} ${r.error_code}`).sort()).toEqual(['count 200 null', 'echo 200 null', 'secret 403 mcp_denied']);
  });
});
