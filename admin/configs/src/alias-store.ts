/**
 * Service `modelRouting` (sdk routing.ts): a workspace's model aliases, held whole in memory (StoredSnapshot: a write
 * reloads here and announces the change to every process), and its default config, from the saved-config set. A
 * call asks with a map lookup; nothing is built per request: each alias keeps one frozen route until it changes.
 */
import { StoredSnapshot } from '@gateway/admin-kit';
import type { Caller, Database, Logger, ModelAliasView, ModelRoute, ModelRouting, Row, StateStore } from '@gateway/sdk';
import { modelAliases } from './alias-table.ts';

export type AliasRow = Row<typeof modelAliases>;

interface AliasEntry {
  readonly organisationId: string;
  readonly stamp: string;
  readonly route: ModelRoute;
  readonly view: ModelAliasView;
}

interface AliasSet {
  /** `<workspace>\n<alias>` */
  readonly byName: ReadonlyMap<string, AliasEntry>;
  /** By workspace, sorted by alias. */
  readonly byWorkspace: ReadonlyMap<string, readonly ModelAliasView[]>;
}

export const aliasKey = (workspaceId: string, alias: string) => `${workspaceId}\n${alias}`;

/** Where an alias row sends a call. */
export function routeOf(row: AliasRow): ModelRoute {
  const route: { savedConfig?: string; provider?: string; model?: string } = {};
  if (row.config_id !== null) route.savedConfig = row.config_id;
  else if (row.provider !== null) route.provider = row.provider;
  if (row.model !== null) route.model = row.model;
  return Object.freeze(route);
}

export interface AliasStoreOptions {
  database: Database;
  state: StateStore;
  logger?: Logger;
  /** The route of a workspace's default config (the saved-config store's), when it has one. */
  defaultRoute: (workspaceId: string) => ModelRoute | undefined;
  refreshMs?: number;
}

export class AliasStore implements ModelRouting {
  private readonly snapshot: StoredSnapshot<AliasSet>;
  private last: AliasSet | undefined;

  constructor(private readonly o: AliasStoreOptions) {
    this.snapshot = new StoredSnapshot({ name: 'model-aliases', state: o.state, load: () => this.load(), logger: o.logger, refreshMs: o.refreshMs });
  }

  /** Unchanged rows keep their entries, so their routes keep their identity (the server caches by it). */
  private async load(): Promise<AliasSet> {
    const rows = await this.o.database.select(modelAliases, { fresh: true });
    const byName = new Map<string, AliasEntry>();
    const lists = new Map<string, ModelAliasView[]>();
    for (const row of rows) {
      const k = aliasKey(row.workspace_id, row.alias);
      const stamp = `${row.updated_at}\n${row.config_id}\n${row.provider}\n${row.model}`;
      let entry = this.last?.byName.get(k);
      if (!entry || entry.stamp !== stamp || entry.organisationId !== row.organisation_id)
        entry = { organisationId: row.organisation_id, stamp, route: routeOf(row), view: Object.freeze({ alias: row.alias, createdAt: row.created_at }) };
      byName.set(k, entry);
      let list = lists.get(row.workspace_id);
      if (!list) lists.set(row.workspace_id, (list = []));
      list.push(entry.view);
    }
    for (const list of lists.values()) list.sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
    this.last = { byName, byWorkspace: lists };
    return this.last;
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  stop(): void {
    this.snapshot.stop();
  }

  /** After a write: reload here, then in every other process. */
  changed(): Promise<void> {
    return this.snapshot.changed();
  }

  /** Completed reloads (tests wait on it). */
  get version(): number {
    return this.snapshot.version;
  }

  route(model: string | undefined, caller: Caller): ModelRoute | undefined {
    if (model !== undefined && model !== '') {
      const entry = this.snapshot.current.byName.get(aliasKey(caller.workspaceId, model));
      if (entry && entry.organisationId === caller.organisationId) return entry.route;
    }
    return this.o.defaultRoute(caller.workspaceId);
  }

  aliases(organisationId: string, workspaceId: string): readonly ModelAliasView[] {
    const list = this.snapshot.current.byWorkspace.get(workspaceId) ?? [];
    // A workspace id is global: the organisation check is the byName entry's; a list holds one workspace's rows.
    const first = list[0];
    if (first && this.snapshot.current.byName.get(aliasKey(workspaceId, first.alias))?.organisationId !== organisationId) return [];
    return list;
  }
}
