/**
 * Service `workspaceDefaults` (sdk routing.ts): each workspace's `defaults.metadata` (stored by the identity plugin),
 * held in memory for the server, which adds it to every request of the workspace (so its logs, routing conditions,
 * policies and guardrails see it) without a database round trip. The identity plugin's `workspace.defaults_changed`
 * event reloads it here and in every process (StoredSnapshot); an unchanged workspace keeps its frozen object, which
 * the server's merge cache is keyed by. Here, beside the other workspace defaults (default config, model aliases).
 */
import { workspaces } from '@gateway/admin-identity';
import { StoredSnapshot } from '@gateway/admin-kit';
import type { Database, Logger, StateStore, WorkspaceDefaults } from '@gateway/sdk';

type Metadata = Readonly<Record<string, string>>;

export class WorkspaceDefaultsStore implements WorkspaceDefaults {
  private readonly snapshot: StoredSnapshot<ReadonlyMap<string, Metadata>>;
  /** Each workspace's metadata with the JSON it was made from, so an unchanged one keeps its object. */
  private last = new Map<string, { text: string; value: Metadata }>();

  constructor(database: Database, state: StateStore, logger?: Logger, refreshMs?: number) {
    this.snapshot = new StoredSnapshot<ReadonlyMap<string, Metadata>>({
      name: 'workspace-defaults',
      state,
      logger,
      refreshMs,
      load: async () => {
        const rows = await database.select(workspaces, { fresh: true });
        const next = new Map<string, { text: string; value: Metadata }>();
        const out = new Map<string, Metadata>();
        for (const row of rows) {
          const metadata = row.defaults?.metadata;
          if (!metadata || Object.keys(metadata).length === 0) continue;
          const text = JSON.stringify(metadata);
          const before = this.last.get(row.id);
          const value = before?.text === text ? before.value : freeze(metadata);
          next.set(row.id, { text, value });
          out.set(row.id, value);
        }
        this.last = next;
        return out;
      },
    });
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  stop(): void {
    this.snapshot.stop();
  }

  changed(): Promise<void> {
    return this.snapshot.changed();
  }

  metadata(workspaceId: string): Metadata | undefined {
    return this.snapshot.current.get(workspaceId);
  }
}

/** String values only, as `x-gateway-metadata`'s are; no prototype. */
function freeze(metadata: Record<string, unknown>): Metadata {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(metadata)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return Object.freeze(out);
}
