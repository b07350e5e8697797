/**
 * The agent-card sync (docs/admin/agents.md, "Agent card sync"): a server's upstream card is read when the server is
 * created, when its integration changes, on `POST /agent-servers/:id/sync`, and then every
 * AGENT_CARD_SYNC_INTERVAL_MS (default one hour) for servers whose last sync is older than that. It goes through the
 * guarded, size-capped card reader with the integration's credentials (no user's own); what is kept is the card's
 * name, description, version and skills. A failed read marks the server `failed` with the reason and keeps the last
 * good card. With several gateway processes, a state-store counter lets one process per server and period do the
 * scheduled read (as the MCP metadata sync does).
 */
import { type Database, eq, type JsonObject, type Logger, type OutboundGuard, type StateStore } from '@gateway/sdk';
import { type CredentialDeps, credentialHeaders } from './credentials.ts';
import { usableIntegration } from './routes/servers.ts';
import { agentServers } from './tables.ts';
import { fetchAgentCard } from './upstream.ts';

export interface CardSyncSettings {
  intervalMs: number;
  timeoutMs: number;
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer (milliseconds)`);
  return n;
}

export function cardSyncSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): CardSyncSettings {
  return {
    intervalMs: positive(env.AGENT_CARD_SYNC_INTERVAL_MS, 'AGENT_CARD_SYNC_INTERVAL_MS', 3_600_000),
    timeoutMs: positive(env.AGENT_CARD_SYNC_TIMEOUT_MS, 'AGENT_CARD_SYNC_TIMEOUT_MS', 10_000),
  };
}

export interface StoredSkill {
  id: string;
  name: string | null;
  description: string | null;
}

/** What the gateway keeps of an agent card. */
export interface StoredCard {
  name: string | null;
  description: string | null;
  version: string | null;
  skills: StoredSkill[];
  /** The URL that answered. */
  source: string;
}

const text = (value: unknown, max: number): string | null => (typeof value === 'string' ? value.slice(0, max) : null);

export function storedCardOf(card: Record<string, unknown>, source: string): StoredCard {
  const skills = Array.isArray(card.skills) ? card.skills : [];
  return {
    name: text(card.name, 255),
    description: text(card.description, 4096),
    version: text(card.version, 64),
    skills: skills
      .filter((s): s is Record<string, unknown> => s !== null && typeof s === 'object' && !Array.isArray(s) && typeof s.id === 'string')
      .slice(0, 500)
      .map((s) => ({ id: String(s.id).slice(0, 255), name: text(s.name, 255), description: text(s.description, 4096) })),
    source,
  };
}

export interface CardSyncDeps extends CredentialDeps {
  database: Database;
  guard: OutboundGuard;
  state: StateStore;
  logger: Logger;
  settings: CardSyncSettings;
}

/** Error messages kept in card_sync_error at most this long. */
const MAX_ERROR = 1000;

export class AgentCardSync {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: CardSyncDeps) {}

  /** Reads the server's upstream card now and stores the outcome; resolves to it (never rejects for an upstream failure). */
  async syncServer(serverId: string): Promise<{ ok: true; card: StoredCard } | { ok: false; error: string }> {
    const { database } = this.deps;
    const [server] = await database.select(agentServers, { where: (c) => eq(c.id, serverId), limit: 1, fresh: true });
    if (!server) return { ok: false, error: 'no such server' };
    try {
      const integration = await usableIntegration(database, server.organisation_id, server.agent_integration_id, server.workspace_id);
      if (!integration) throw new Error('its agent integration is gone or no longer open to its workspace');
      const credentials = await credentialHeaders(integration, server.workspace_id, this.deps);
      const { card, url } = await fetchAgentCard(this.deps.guard, integration, credentials, AbortSignal.timeout(this.deps.settings.timeoutMs));
      const stored = storedCardOf(card, url);
      await database.update(agentServers, { card: stored as unknown as JsonObject, card_sync_status: 'synced', card_sync_error: null, card_synced_at: Date.now() }, (c) => eq(c.id, serverId));
      return { ok: true, card: stored };
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR);
      this.deps.logger.warn({ server: serverId, error: message }, 'Agent card sync failed');
      // The last good card stays: only the status and the reason change.
      await database.update(agentServers, { card_sync_status: 'failed', card_sync_error: message, card_synced_at: Date.now() }, (c) => eq(c.id, serverId));
      return { ok: false, error: message };
    }
  }

  /** One scheduled round: every server not synced within the interval, one at a time. */
  async round(now = Date.now()): Promise<number> {
    const { intervalMs } = this.deps.settings;
    const servers = await this.deps.database.select(agentServers, { fresh: true });
    let done = 0;
    for (const server of servers) {
      if (server.card_synced_at !== null && now - server.card_synced_at < intervalMs) continue;
      // One process per server and period.
      const claim = await this.deps.state.incr(`agents:card-sync:${server.id}:${Math.floor(now / intervalMs)}`, 1, intervalMs);
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
        .then(() => undefined, (error) => this.deps.logger.error({ err: error }, 'Agent card sync round failed'))
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
