/**
 * A workspace's response-cache settings: the saved config that is its embeddings target for the semantic cache.
 *
 * Service `workspaceCacheSettings` (WorkspaceCacheSettings) answers from memory: the semantic cache asks it on every
 * lookup. Every row is held in a StoredSnapshot (admin-kit): a write here reloads it before the route answers and
 * announces the change on the state store (`changes:workspace-cache-settings`), so every other process sharing the
 * database and Redis reloads at once; a periodic reload covers a lost announcement.
 */
import { StoredSnapshot } from '@gateway/admin-kit';
import { type Database, eq, type Logger, type Row, type StateStore, type Where, type WorkspaceCacheSettings } from '@gateway/sdk';
import { workspaceCacheSettings } from './tables.ts';

/** Service `workspaceCacheSettings`, declared in the SDK (the cache plugin reads it). */
export type { WorkspaceCacheSettings };

export type CacheSettingsRow = Row<typeof workspaceCacheSettings>;

export interface CacheSettingsStoreOptions {
  database: Database;
  state: StateStore;
  logger?: Logger;
  /** Reload anyway this often; default 60 s (StoredSnapshot's). */
  refreshMs?: number;
}

export class CacheSettingsStore implements WorkspaceCacheSettings {
  private readonly snapshot: StoredSnapshot<ReadonlyMap<string, string>>;

  constructor(private readonly o: CacheSettingsStoreOptions) {
    this.snapshot = new StoredSnapshot({
      name: 'workspace-cache-settings',
      state: o.state,
      load: () => this.load(),
      logger: o.logger,
      refreshMs: o.refreshMs,
    });
  }

  /** Embeddings targets by workspace id (workspaces without one are left out). */
  private async load(): Promise<ReadonlyMap<string, string>> {
    const rows = await this.o.database.select(workspaceCacheSettings, { fresh: true });
    const targets = new Map<string, string>();
    for (const row of rows) if (row.embeddings_config !== null) targets.set(row.workspace_id, row.embeddings_config);
    return targets;
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  stop(): void {
    this.snapshot.stop();
  }

  /** Completed reloads (tests wait on it). */
  get version(): number {
    return this.snapshot.version;
  }

  /** WorkspaceCacheSettings (a bound function: the service may be handed around). */
  readonly embeddingsConfig = (workspaceId: string): string | undefined => this.snapshot.current.get(workspaceId);

  /** The stored row of a workspace, read from the writer; undefined when it never set anything. */
  async read(workspaceId: string): Promise<CacheSettingsRow | undefined> {
    const [row] = await this.o.database.select(workspaceCacheSettings, { where: (c) => eq(c.workspace_id, workspaceId), limit: 1, fresh: true });
    return row;
  }

  /**
   * Sets (or, with null, clears) a workspace's embeddings target; resolves to the rows before and after. This
   * process answers the new value when it resolves; the others as soon as they hear the announcement.
   */
  async write(organisationId: string, workspaceId: string, embeddingsConfig: string | null): Promise<{ before: CacheSettingsRow | undefined; after: CacheSettingsRow }> {
    const where: Where<(typeof workspaceCacheSettings)['columns']> = (c) => eq(c.workspace_id, workspaceId);
    const before = await this.read(workspaceId);
    const after: CacheSettingsRow = { workspace_id: workspaceId, organisation_id: organisationId, embeddings_config: embeddingsConfig, updated_at: Date.now() };
    const change = { embeddings_config: embeddingsConfig, updated_at: after.updated_at };
    // One statement at a time, no transaction: concurrent first writes of a workspace would otherwise deadlock in
    // MySQL (each holding the shared lock of its ignored insert while it waits to update). A first write that another
    // one beats to the insert updates the row instead; the last write wins.
    const updated = before ? await this.o.database.update(workspaceCacheSettings, change, where) : 0;
    if (updated === 0 && (await this.o.database.insert(workspaceCacheSettings, after, { ignoreDuplicates: true })) === 0)
      await this.o.database.update(workspaceCacheSettings, change, where);
    await this.snapshot.changed();
    return { before, after };
  }
}
