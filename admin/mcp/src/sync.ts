/**
 * The metadata sync (docs/admin/mcp.md, "Metadata sync"): a server's upstream is read when the server is created,
 * when its integration changes, on `POST /mcp-servers/:id/sync`, and then every MCP_SYNC_INTERVAL_MS (default one
 * hour) for servers whose last sync is older than that. With several gateway processes, a state-store counter
 * lets one process per server and period do the scheduled read.
 */
import { type Database, eq, type JsonObject, type Logger, type OutboundGuard, type StateStore } from '@gateway/sdk';
import { type McpMetadata, readMetadata } from './metadata.ts';
import { mcpIntegrations, mcpServers } from './tables.ts';
import { type UpstreamDeps, upstreamOf } from './upstream.ts';

export interface SyncSettings {
  intervalMs: number;
  timeoutMs: number;
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer (milliseconds)`);
  return n;
}

export function syncSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): SyncSettings {
  return {
    intervalMs: positive(env.MCP_SYNC_INTERVAL_MS, 'MCP_SYNC_INTERVAL_MS', 3_600_000),
    timeoutMs: positive(env.MCP_SYNC_TIMEOUT_MS, 'MCP_SYNC_TIMEOUT_MS', 10_000),
  };
}

export interface SyncDeps extends UpstreamDeps {
  database: Database;
  guard: OutboundGuard;
  state: StateStore;
  logger: Logger;
  settings: SyncSettings;
}

/** Error messages kept in sync_error at most this long. */
const MAX_ERROR = 1000;

export class McpSync {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: SyncDeps) {}

  /** Reads the server's upstream now and stores the outcome; resolves to it (never rejects for an upstream failure). */
  /** `userValue`: a user's own credential, for a server whose integration takes one per user (their connection). */
  async syncServer(serverId: string, userValue?: string): Promise<{ ok: true; metadata: McpMetadata } | { ok: false; error: string }> {
    const { database } = this.deps;
    const [server] = await database.select(mcpServers, { where: (c) => eq(c.id, serverId), limit: 1, fresh: true });
    if (!server) return { ok: false, error: 'no such server' };
    const [integration] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, server.mcp_integration_id), limit: 1, fresh: true });
    try {
      if (!integration) throw new Error('its MCP integration no longer exists');
      const upstream = await upstreamOf(integration, server.workspace_id, this.deps, userValue);
      const metadata = await readMetadata(upstream, this.deps.guard, this.deps.settings.timeoutMs);
      await database.update(mcpServers, { metadata: metadata as unknown as JsonObject, sync_status: 'synced', sync_error: null, synced_at: Date.now() }, (c) => eq(c.id, serverId));
      return { ok: true, metadata };
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR);
      this.deps.logger.warn({ server: serverId, error: message }, 'MCP metadata sync failed');
      await database.update(mcpServers, { sync_status: 'failed', sync_error: message, synced_at: Date.now() }, (c) => eq(c.id, serverId));
      return { ok: false, error: message };
    }
  }

  /** One scheduled round: every server not synced within the interval, one at a time. */
  async round(now = Date.now()): Promise<number> {
    const { intervalMs } = this.deps.settings;
    const servers = await this.deps.database.select(mcpServers, { fresh: true });
    let done = 0;
    for (const server of servers) {
      if (server.synced_at !== null && now - server.synced_at < intervalMs) continue;
      // One process per server and period.
      const claim = await this.deps.state.incr(`mcp:sync:${server.id}:${Math.floor(now / intervalMs)}`, 1, intervalMs);
      if (claim !== 1) continue;
      await this.syncServer(server.id);
      done++;
    }
    return done;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.round()
        .then(() => undefined, (error) => this.deps.logger.error({ err: error }, 'MCP metadata sync round failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, Math.min(this.deps.settings.intervalMs, 60_000));
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
