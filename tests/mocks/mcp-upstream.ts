/**
 * An MCP server on loopback built with the official SDK (McpServer over its web-standard streamable HTTP transport,
 * one transport per session), for the MCP gateway's tests. It demands `authorization: Bearer <token>` (the
 * credential the gateway holds), and offers tools (`echo`, `count` which streams progress and log notifications
 * before its result, `fail` which reports a tool error, `secret`), a resource and a prompt.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
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

export async function startMcpUpstream(token: string): Promise<McpUpstream> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const seenAuthorization: (string | null)[] = [];
  const sessions: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
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
