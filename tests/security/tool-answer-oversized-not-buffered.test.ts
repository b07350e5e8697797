/**
 * An MCP or A2A upstream (its URL set by whoever may write the integration) answers a tools/call or message/send
 * with an endless JSON body, hoping the gateway holds it whole (memory exhaustion). The proxies read a whole answer
 * only up to TOOL_MAX_ANSWER_BYTES, counted as it arrives: past it the client gets a 502 JSON-RPC error and the
 * gateway reads no further.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const CAP = 1024 * 1024;
const TOTAL = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

/** An upstream that answers `endless` methods with an endless JSON body, anything else with a 500. */
function endlessUpstream(endless: string) {
  const served = { bytes: 0 };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const text = req.method === 'POST' ? await req.text() : '';
      const message = text ? (JSON.parse(text) as { method?: string }) : {};
      if (message.method !== endless) return new Response('no', { status: 500 });
      let sent = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (sent >= TOTAL) return controller.close();
            const chunk = sent === 0 ? new TextEncoder().encode('{"jsonrpc":"2.0","id":7,"result":{"x":"') : new Uint8Array(CHUNK).fill(0x61);
            sent += chunk.byteLength;
            served.bytes += chunk.byteLength;
            controller.enqueue(chunk);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    },
  });
  return { server, served, url: `http://127.0.0.1:${server.port}/rpc` };
}

describe('an endless non-streamed tool or agent answer [sqlite]', () => {
  let gw: Gateway;
  const mcp = endlessUpstream('tools/call');
  const a2a = endlessUpstream('message/send');
  const admin = async (method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY) => {
    const res = await gw.handle(
      new Request(`http://gateway.test/v1${path}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error: Record<string, unknown> } };
  };

  beforeAll(async () => {
    gw = await startInProcessGateway({ TOOL_MAX_ANSWER_BYTES: String(CAP), GATEWAY_ENCRYPTION_KEY: 'tool-answer-cap-encryption-key-0123456789' });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    mcp.server.stop(true);
    a2a.server.stop(true);
  });

  test('MCP: tools/call is answered 502 with a JSON-RPC error, the upstream read no further than the cap and a chunk or so', async () => {
    const integration = await admin('POST', '/mcp-integrations', { name: 'Endless', url: mcp.url });
    expect(integration.status).toBe(201);
    const server = await admin('POST', '/mcp-servers', { name: 'Endless', slug: 'endless', mcp_integration_id: integration.body.id });
    expect(server.status).toBe(201);
    const res = await gw.handle(
      new Request('http://gateway.test/v1/mcp/endless', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': TEST_ADMIN_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {} } }),
      }),
    );
    expect(res.status).toBe(502);
    const body = (await res.json()) as { jsonrpc: string; id: number; error: { code: number; message: string; data: { type: string } } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32603, data: { type: 'upstream_error' } } });
    expect(body.error.message).toContain('TOOL_MAX_ANSWER_BYTES');
    // Socket buffers may hold a few MiB more than the gateway read; far from the whole 64 MiB.
    expect(mcp.served.bytes).toBeGreaterThan(CAP);
    expect(mcp.served.bytes).toBeLessThan(TOTAL / 4);
  }, 30_000);

  test('A2A: message/send is answered 502 with a JSON-RPC error, the upstream read no further than the cap and a chunk or so', async () => {
    const workspaces = await admin('GET', '/workspaces');
    const workspace = (workspaces.body.data as { id: string; slug: string }[]).find((w) => w.slug === 'default')?.id;
    const key = await admin('POST', '/api-keys', { name: 'invoker', type: 'workspace-service', workspace_id: workspace, scopes: ['agents.invoke'] });
    expect(key.status).toBe(201);
    const integration = await admin('POST', '/agent-integrations', { name: 'Endless agent', url: a2a.url, workspace_id: workspace, auth: { type: 'none' } });
    expect(integration.status).toBe(201);
    const server = await admin('POST', '/agent-servers', { name: 'Endless agent', agent_integration_id: integration.body.id });
    expect(server.status).toBe(201);
    const res = await gw.handle(
      new Request(`http://gateway.test/v1/agent-servers/${server.body.id}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': String(key.body.key) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } } }),
      }),
    );
    expect(res.status).toBe(502);
    const body = (await res.json()) as { jsonrpc: string; id: string; error: { code: number; message: string; data: { type: string } } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 'a', error: { code: -32603, data: { type: 'upstream_error' } } });
    expect(body.error.message).toContain('TOOL_MAX_ANSWER_BYTES');
    expect(a2a.served.bytes).toBeGreaterThan(CAP);
    expect(a2a.served.bytes).toBeLessThan(TOTAL / 4);
  }, 30_000);
});
