/**
 * The MCP gateway's test stack: a whole in-process gateway on a fresh database (SQLite or MariaDB), an upstream MCP
 * server on loopback (tests/mocks/mcp-upstream.ts), and the official MCP client speaking to the gateway's
 * /v1/mcp/:slug through `gateway.handle` (real Requests and Responses, streams included).
 */
import { afterAll, beforeAll } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, type E2EDialect } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type McpUpstream, startMcpUpstream } from '../mocks/mcp-upstream.ts';

export { TEST_ADMIN_KEY };
export const UPSTREAM_TOKEN = 'upstream-token-held-by-the-gateway';

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface McpStack {
  gw: Gateway;
  db: E2EDatabase;
  upstream: McpUpstream;
  defaultWorkspace: string;
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>>;
  /** The official client connected to /v1/mcp/<slug> with `key`. */
  connect(slug: string, key?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;
}

/** `env`: more gateway settings (the secret cache's lifetime, the sync interval). */
export function useMcpStack(dialect: E2EDialect, env: Record<string, string> = {}): () => McpStack {
  let stack: McpStack | undefined;
  beforeAll(async () => {
    const db = await createE2EDatabase(dialect);
    const upstream = await startMcpUpstream(UPSTREAM_TOKEN);
    const gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: 'mcp-tests-encryption-key-0123456789', ...env });
    const admin = async <T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<Answer<T>> => {
      const res = await gw.handle(
        new Request(`http://gateway.test/v1${path}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
    };
    const workspaces = await admin<{ data: { id: string; slug: string }[] }>('GET', '/workspaces');
    const defaultWorkspace = workspaces.body.data.find((w) => w.slug === 'default')?.id;
    if (!defaultWorkspace) throw new Error('no default workspace');
    stack = {
      gw,
      db,
      upstream,
      defaultWorkspace,
      admin,
      async connect(slug, key = TEST_ADMIN_KEY) {
        const transport = new StreamableHTTPClientTransport(new URL(`http://gateway.test/v1/mcp/${slug}`), {
          fetch: (url, init) => gw.handle(new Request(String(url), init)),
          requestInit: { headers: { 'x-gateway-api-key': key } },
        });
        const client = new Client({ name: 'gateway-test-client', version: '0.0.1' });
        await client.connect(transport);
        return { client, transport };
      },
    };
  }, 60_000);
  afterAll(async () => {
    if (!stack) return;
    await stack.gw.close();
    await stack.upstream.close();
    await stack.db.drop();
  });
  return () => {
    if (!stack) throw new Error('the MCP stack did not start');
    return stack;
  };
}

let counter = 0;
export const uniqueSlug = (base: string) => `${base}-${process.pid}-${++counter}`;
