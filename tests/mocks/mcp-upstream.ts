/**
 * An MCP server on loopback built with the official SDK (McpServer over its web-standard streamable HTTP transport,
 * one transport per session), for the MCP gateway's tests. It demands `authorization: Bearer <token>` (the
 * credential the gateway holds), and offers tools (`echo`, `count` which streams progress and log notifications
 * before its result, `fail` which reports a tool error, `secret`), a resource and a prompt. `startMcpSseUpstream`
 * serves the same over the older HTTP+SSE transport (GET /sse, POST /messages?sessionId=), on node:http as the
 * SDK's SSEServerTransport needs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface McpUpstream {
  url: string;
  /** Authorization headers the upstream saw, in order. */
  seenAuthorization: (string | null)[];
  /** Upstream session ids opened so far. */
  sessions: string[];
  close(): Promise<void>;
}

function buildServer(): McpServer {
  const server = new McpServer(
    {
      name: 'loopback-tools',
      version: '2.3.4',
      title: 'Loopback Tools',
      icons: [{ src: 'https://example.com/icon.png', mimeType: 'image/png', sizes: ['48x48'] }],
    },
    { capabilities: { logging: {} }, instructions: 'Tools for the gateway tests' },
  );
  server.registerTool('echo', { title: 'Echo', description: 'Says the text back', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  server.registerTool('count', { description: 'Counts to n, streaming progress', inputSchema: { n: z.number().int() } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `counted ${i}` } });
    }
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  });
  server.registerTool('fail', { description: 'Always fails' }, async () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }));
  server.registerTool('secret', { description: 'Must never be reached through a deny list' }, async () => ({ content: [{ type: 'text', text: 'leaked' }] }));
  server.registerResource('hello', 'note://hello', { title: 'Hello note', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'hello from the upstream' }],
  }));
  server.registerPrompt('greet', { description: 'Greets someone', argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${who}` } }],
  }));
  return server;
}

/** `authorizationServer`: the upstream names it in its protected-resource metadata (RFC 9728), for OAuth tests. */
export async function startMcpUpstream(token: string, options: { authorizationServer?: string } = {}): Promise<McpUpstream> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const seenAuthorization: (string | null)[] = [];
  const sessions: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (options.authorizationServer && path.startsWith('/.well-known/oauth-protected-resource'))
        return Response.json({ resource: `${new URL(request.url).origin}/mcp`, authorization_servers: [options.authorizationServer] });
      seenAuthorization.push(request.headers.get('authorization'));
      if (request.headers.get('authorization') !== `Bearer ${token}`) return new Response('unauthorised', { status: 401 });
      const sessionId = request.headers.get('mcp-session-id');
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) return new Response('no such session', { status: 404 });
        const body = request.method === 'POST' ? await request.clone().json() : undefined;
        if (!isInitializeRequest(body)) return new Response('initialize first', { status: 400 });
        const created = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
            sessions.push(id);
          },
          onsessionclosed: (id) => void transports.delete(id),
        });
        await buildServer().connect(created);
        transport = created;
      }
      return transport.handleRequest(request);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    seenAuthorization,
    sessions,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      server.stop(true);
    },
  };
}

/** The same server on the HTTP+SSE transport of 2024-11-05. */
export async function startMcpSseUpstream(token: string): Promise<McpUpstream> {
  const transports = new Map<string, SSEServerTransport>();
  const seenAuthorization: (string | null)[] = [];
  const sessions: string[] = [];
  const http = createServer(async (req, res) => {
    seenAuthorization.push(req.headers.authorization ?? null);
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end('unauthorised');
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      sessions.push(transport.sessionId);
      res.on('close', () => void transports.delete(transport.sessionId));
      await buildServer().connect(transport);
      return;
    }
    const transport = url.pathname === '/messages' && req.method === 'POST' ? transports.get(url.searchParams.get('sessionId') ?? '') : undefined;
    if (!transport) return void res.writeHead(404).end('no such session');
    await transport.handlePostMessage(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    seenAuthorization,
    sessions,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
