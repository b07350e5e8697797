/**
 * Rate limits and guardrails on MCP tool calls, through the tool-call phase (docs/plugins.md, "Tool calls"), with the
 * official MCP client through the gateway: a `tool_calls` rate-limit policy refuses the third call (429, a JSON-RPC
 * error body, never forwarded); the config the call names (`x-gateway-config`) judges the arguments with its input
 * guardrails and the result with its output guardrails; the request-log rows say why each was refused.
 */
import { describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startMcpSseUpstream } from '../mocks/mcp-upstream.ts';
import { TEST_ADMIN_KEY, UPSTREAM_TOKEN, uniqueSlug, useMcpStack } from './support.ts';

type View = Record<string, unknown>;

for (const dialect of E2E_DIALECTS) describe(`the tool-call phase on MCP tool calls [${dialect}]`, () => {
  const get = useMcpStack(dialect);

  async function server(): Promise<string> {
    const s = get();
    const integration = await s.admin<View>('POST', '/mcp-integrations', {
      name: 'Phase',
      slug: uniqueSlug('phase'),
      url: s.upstream.url,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('phase');
    expect((await s.admin('POST', '/mcp-servers', { name: 'Phase', slug, mcp_integration_id: integration.body.id })).status).toBe(201);
    return slug;
  }

  async function connect(slug: string, headers: Record<string, string> = {}) {
    const s = get();
    const transport = new StreamableHTTPClientTransport(new URL(`http://gateway.test/v1/mcp/${slug}`), {
      fetch: (url, init) => s.gw.handle(new Request(String(url), init)),
      requestInit: { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, ...headers } },
    });
    const client = new Client({ name: 'phase-test-client', version: '0.0.1' });
    await client.connect(transport);
    return client;
  }

  async function logRows(slug: string) {
    const s = get();
    await s.gw.service(RequestLogServices.queue).flush();
    const rows = await s.db.query(
      `SELECT model, status, error_code, error_message, metadata FROM request_logs WHERE endpoint = 'mcp.tools/call' AND provider_slug = '${slug}' ORDER BY created_at, id`,
    );
    return rows.map((r) => {
      const metadata = (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) as Record<string, string>;
      return { status: Number(r.status), code: r.error_code, message: r.error_message as string | null, outcome: metadata.mcp_outcome, by: metadata.mcp_refused_by };
    });
  }

  test('a tool_calls policy of 2 per minute on the server refuses the third call with 429, not forwarded, logged as rate limited', async () => {
    const s = get();
    const slug = await server();
    const policy = await s.admin<View>('POST', '/policies/rate-limits', { name: 'two tool calls', type: 'tool_calls', unit: 'rpm', value: 2, conditions: [{ key: 'provider', value: slug }] });
    expect(policy.status).toBe(201);
    expect(policy.body.type).toBe('tool_calls');
    const client = await connect(slug);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'one' } })).content).toEqual([{ type: 'text', text: 'echo: one' }]);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'two' } })).content).toEqual([{ type: 'text', text: 'echo: two' }]);
    const upstreamRequests = s.upstream.seenAuthorization.length;
    const third = client.callTool({ name: 'echo', arguments: { text: 'three' } });
    await expect(third).rejects.toThrow(/HTTP 429|rate_limit_exceeded/);
    await third.catch((error: Error) => {
      expect(error.message).toContain('Rate limit exceeded: policy');
      expect(error.message).toContain('"code":-32000');
    });
    expect(s.upstream.seenAuthorization.length).toBe(upstreamRequests);
    // Other servers are not counted by a policy that names this one.
    const other = await server();
    const otherClient = await connect(other);
    for (let i = 0; i < 3; i++) expect((await otherClient.callTool({ name: 'echo', arguments: { text: `x${i}` } })).isError).toBeFalsy();
    await otherClient.close();
    await client.close();
    // Archived, it counts no longer.
    expect((await s.admin('DELETE', `/policies/rate-limits/${policy.body.id}`)).status).toBe(204);

    const rows = await logRows(slug);
    expect(rows.map((r) => [r.status, r.outcome])).toEqual([
      [200, 'ok'],
      [200, 'ok'],
      [429, 'refused'],
    ]);
    expect(rows[2]).toMatchObject({ code: 'mcp_refused', by: 'rate_limit_exceeded' });
    expect(rows[2]?.message).toContain('allows 2 tool calls per minute');
  });

  test('the raw answer of a refused call: 429, Retry-After, a JSON-RPC error whose data is the gateway error', async () => {
    const s = get();
    const slug = await server();
    expect((await s.admin('POST', '/policies/rate-limits', { name: 'none left', type: 'tool_calls', unit: 'rpm', value: 1, conditions: [{ key: 'provider', value: slug }, { key: 'model', value: 'echo' }] })).status).toBe(201);
    const call = (id: number) =>
      s.gw.handle(
        new Request(`http://gateway.test/v1/mcp/${slug}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': TEST_ADMIN_KEY },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }),
        }),
      );
    // Without a session the upstream refuses the first call (initialize first): it was forwarded all the same.
    await (await call(1)).text();
    const refused = await call(2);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32000, data: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } } });
  });

  test('input guardrails block an argument matching a regex (never forwarded); output guardrails block a result; both logged', async () => {
    const s = get();
    const slug = await server();
    const config = {
      input_guardrails: [{ id: 'no-rm', deny: true, 'default.regexMatch': { rule: 'rm\\s+-rf', not: true } }],
      output_guardrails: [{ id: 'no-classified', deny: true, 'default.regexMatch': { rule: '(?i)classified', not: true } }],
    };
    const client = await connect(slug, { 'x-gateway-config': JSON.stringify(config) });
    expect((await client.callTool({ name: 'echo', arguments: { text: 'ls -la' } })).content).toEqual([{ type: 'text', text: 'echo: ls -la' }]);

    const upstreamRequests = s.upstream.seenAuthorization.length;
    const blocked = client.callTool({ name: 'echo', arguments: { text: 'please rm  -rf /' } });
    await expect(blocked).rejects.toThrow(/denied by guardrail \\"no-rm\\"|denied by guardrail "no-rm"/);
    expect(s.upstream.seenAuthorization.length).toBe(upstreamRequests);

    // The upstream answers; the gateway withholds the result.
    await expect(client.callTool({ name: 'echo', arguments: { text: 'the CLASSIFIED plan' } })).rejects.toThrow(/The tool result was denied by guardrail "no-classified"/);
    expect(s.upstream.seenAuthorization.length).toBeGreaterThan(upstreamRequests);
    // A call without the header runs under no guardrail.
    const plain = await connect(slug);
    expect((await plain.callTool({ name: 'echo', arguments: { text: 'rm -rf' } })).content).toEqual([{ type: 'text', text: 'echo: rm -rf' }]);
    await plain.close();
    await client.close();

    const rows = await logRows(slug);
    expect(rows.map((r): unknown[] => [r.status, r.outcome, r.by])).toEqual([
      [200, 'ok', undefined],
      [400, 'refused', 'guardrail_denied'],
      [400, 'refused', 'guardrail_denied'],
      [200, 'ok', undefined],
    ]);
    expect(rows[1]?.message).toBe('The tool call was denied by guardrail "no-rm"');
    expect(rows[2]?.message).toBe('The tool result was denied by guardrail "no-classified"');
  });

  test('an SSE-transport upstream (the bridge): results judged in order, progress passed, a refused result withheld', async () => {
    const s = get();
    const sse = await startMcpSseUpstream(UPSTREAM_TOKEN);
    try {
      const integration = await s.admin<View>('POST', '/mcp-integrations', {
        name: 'Old phase',
        url: sse.url,
        transport: 'sse',
        auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
      });
      expect(integration.status).toBe(201);
      const slug = uniqueSlug('old-phase');
      expect((await s.admin('POST', '/mcp-servers', { name: 'Old phase', slug, mcp_integration_id: integration.body.id })).status).toBe(201);
      const config = { output_guardrails: [{ id: 'no-classified', deny: true, 'default.regexMatch': { rule: '(?i)classified', not: true } }] };
      const client = await connect(slug, { 'x-gateway-config': JSON.stringify(config) });
      const progress: number[] = [];
      const counted = await client.callTool({ name: 'count', arguments: { n: 2 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
      expect(counted.content).toEqual([{ type: 'text', text: 'counted to 2' }]);
      expect(progress).toEqual([1, 2]);
      await expect(client.callTool({ name: 'echo', arguments: { text: 'classified' } })).rejects.toThrow(/The tool result was denied by guardrail "no-classified"/);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'open' } })).content).toEqual([{ type: 'text', text: 'echo: open' }]);
      await client.close();
      expect((await logRows(slug)).map((r): unknown[] => [r.status, r.outcome, r.by])).toEqual([
        [200, 'ok', undefined],
        [400, 'refused', 'guardrail_denied'],
        [200, 'ok', undefined],
      ]);
    } finally {
      await sse.close();
    }
  });

  test("the workspace's default config judges calls that name none", async () => {
    const s = get();
    const made = await s.admin<View>('POST', '/workspaces', { name: `Guarded ${uniqueSlug('ws')}` });
    expect(made.status).toBe(201);
    const workspace = String(made.body.id);
    const key = await s.admin<View>('POST', '/api-keys', { name: 'guarded caller', type: 'workspace-service', workspace_id: workspace, scopes: ['mcp_servers.invoke'] });
    expect(key.status).toBe(201);
    const saved = await s.admin('POST', '/configs', {
      name: 'Tool guard',
      workspace_id: workspace,
      is_default: true,
      config: { input_guardrails: [{ id: 'no-drop', deny: true, 'default.regexMatch': { rule: '(?i)drop table', not: true } }] },
    });
    expect(saved.status).toBe(201);
    const integration = await s.admin<View>('POST', '/mcp-integrations', {
      name: 'Guarded',
      workspace_id: workspace,
      url: s.upstream.url,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('guarded');
    expect((await s.admin('POST', '/mcp-servers', { name: 'Guarded', slug, workspace_id: workspace, mcp_integration_id: integration.body.id })).status).toBe(201);
    const client = new Client({ name: 'phase-test-client', version: '0.0.1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://gateway.test/v1/mcp/${slug}`), {
        fetch: (url, init) => s.gw.handle(new Request(String(url), init)),
        requestInit: { headers: { 'x-gateway-api-key': String(key.body.key) } },
      }),
    );
    expect((await client.callTool({ name: 'echo', arguments: { text: 'select 1' } })).content).toEqual([{ type: 'text', text: 'echo: select 1' }]);
    await expect(client.callTool({ name: 'echo', arguments: { text: 'DROP TABLE users' } })).rejects.toThrow(/denied by guardrail \\?"no-drop/);
    await client.close();
  });
});
