/**
 * Reading an upstream's metadata: connect with the official MCP client (every request through the outbound guard,
 * so the URL is checked against private addresses at connect time, and no redirect is followed), `initialize`, then
 * `tools/list`, `resources/list` and `prompts/list` for the capabilities the server declares, every page.
 */
import type { OutboundGuard } from '@gateway/sdk';
import { loadMcpClient } from './mcp-sdk.ts';
import type { Upstream } from './upstream.ts';

export interface McpMetadata {
  [key: string]: unknown;
  server: { name: string; version: string; title: string | null; description: string | null; icons: unknown[]; website_url: string | null };
  protocol_version: string | null;
  instructions: string | null;
  capabilities: Record<string, unknown>;
  tools: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  prompts: Record<string, unknown>[];
}

/** Pages read per list at most: a server that never stops paging does not hold a sync forever. */
const MAX_PAGES = 50;

async function allPages<T>(read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await read(cursor);
    out.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out;
}

/** The upstream's metadata; rejects when it cannot be reached, refuses the URL, or answers something else than MCP. */
export async function readMetadata(upstream: Upstream, guard: OutboundGuard, timeoutMs: number): Promise<McpMetadata> {
  const url = new URL(upstream.url);
  const fetch = (input: string | URL, init?: RequestInit) => guard.fetch(input, init);
  const requestInit: RequestInit = { headers: { ...upstream.headers } };
  let negotiated: string | null = null;
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await loadMcpClient();
  const transport =
    upstream.transport === 'sse' ? new SSEClientTransport(url, { fetch, requestInit }) : new StreamableHTTPClientTransport(url, { fetch, requestInit });
  // The client tells the transport the protocol version it agreed on; keep a copy for the metadata.
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version: string) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: 'ai-gateway', version: '1.0.0' });
  const options = { timeout: timeoutMs };
  try {
    await client.connect(transport, options);
    const info = client.getServerVersion();
    const capabilities = client.getServerCapabilities() ?? {};
    const [tools, resources, prompts] = await Promise.all([
      capabilities.tools ? allPages(async (cursor) => {
        const r = await client.listTools(cursor ? { cursor } : undefined, options);
        return { items: r.tools as Record<string, unknown>[], nextCursor: r.nextCursor };
      }) : [],
      capabilities.resources ? allPages(async (cursor) => {
        const r = await client.listResources(cursor ? { cursor } : undefined, options);
        return { items: r.resources as Record<string, unknown>[], nextCursor: r.nextCursor };
      }) : [],
      capabilities.prompts ? allPages(async (cursor) => {
        const r = await client.listPrompts(cursor ? { cursor } : undefined, options);
        return { items: r.prompts as Record<string, unknown>[], nextCursor: r.nextCursor };
      }) : [],
    ]);
    const described = info as (typeof info & { description?: string; websiteUrl?: string }) | undefined;
    return {
      server: {
        name: info?.name ?? '',
        version: info?.version ?? '',
        title: info?.title ?? null,
        description: described?.description ?? null,
        icons: (info?.icons as unknown[] | undefined) ?? [],
        website_url: described?.websiteUrl ?? null,
      },
      protocol_version: negotiated,
      instructions: client.getInstructions() ?? null,
      capabilities: capabilities as Record<string, unknown>,
      tools,
      resources,
      prompts,
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}
