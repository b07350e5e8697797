/**
 * Per-client MCP sessions: the gateway gives each client its own `Mcp-Session-Id` and keeps, in the state store
 * (Redis when several processes share the work), which server, which API key, and which upstream session it maps
 * to. A session is used only by the key that opened it; it lapses MCP_SESSION_TTL_MS (default one hour) after its
 * last use.
 */
import type { StateStore } from '@gateway/sdk';

export interface McpSession {
  serverId: string;
  apiKeyId: string;
  /** The upstream's Mcp-Session-Id; null for an upstream without sessions. */
  upstream: string | null;
}

const key = (id: string) => `mcp:session:${id}`;

export class McpSessions {
  constructor(
    private readonly state: StateStore,
    private readonly ttlMs: number,
  ) {}

  async open(session: McpSession): Promise<string> {
    const id = crypto.randomUUID();
    await this.state.set(key(id), JSON.stringify(session), this.ttlMs);
    return id;
  }

  /** The session when it exists and belongs to this server and key; undefined otherwise (the client starts again). */
  async find(id: string, serverId: string, apiKeyId: string): Promise<McpSession | undefined> {
    const raw = await this.state.get(key(id));
    if (!raw) return undefined;
    const session = JSON.parse(raw) as McpSession;
    if (session.serverId !== serverId || session.apiKeyId !== apiKeyId) return undefined;
    await this.state.set(key(id), raw, this.ttlMs);
    return session;
  }

  async close(id: string): Promise<void> {
    await this.state.del(key(id));
  }
}
