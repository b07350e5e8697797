/**
 * Saved configs on the hot path: every current version held in memory (StoredSnapshot), secrets put back in.
 * `resolve` is the server's SavedConfigResolver: a map lookup and a workspace check, no I/O. It hands out the same
 * object until the config changes (the server freezes it once, and the hook engine caches its plan by identity).
 *
 * A config's string guardrail entries are replaced by the saved guardrails they name, looked up for the config's
 * own workspace: the caller-less `savedGuardrails` resolver is never asked for a saved config's entries. When the
 * guardrails change (their generation moves), the config object is rebuilt, so a new plan is made.
 */
import type { SavedGuardrailStore } from '@gateway/admin-guardrails';
import { joinSecrets, openSecrets, reindex, type SecretBox, type StoredIndex, StoredSnapshot } from '@gateway/admin-kit';
import { type Caller, type Database, Errors, type GatewayConfig, type Logger, markSavedConfig, type ModelRoute, type SavedConfigResolver, type StateStore } from '@gateway/sdk';
import { GUARDRAIL_LISTS, stringEntries } from './refs.ts';
import type { ConfigRow } from './present.ts';
import { configSecretsAt, savedConfigs } from './tables.ts';

/**
 * The check id of the entry that stands for a saved guardrail a saved config names but that cannot be found (no
 * such check exists, so the check fails, and the entry denies): a config that was guarded is never run unguarded.
 */
export const MISSING_GUARDRAIL_CHECK = 'saved_guardrail.not_found';

interface ConfigEntry {
  readonly id: string;
  readonly organisationId: string;
  readonly workspaceId: string;
  /** What tells whether the row changed since this entry was built. */
  readonly stamp: string;
  /** The current version, secrets in; undefined when its secrets cannot be opened. */
  readonly config: GatewayConfig | undefined;
  /** It names saved guardrails (string entries). */
  readonly refs: boolean;
  built: GatewayConfig | undefined;
  /** The guardrail generation `built` was made from. */
  builtFor: number;
}

/** bySlug: `<workspace>\n<slug>` */
type ConfigSet = StoredIndex<ConfigEntry>;

export interface ConfigStoreOptions {
  database: Database;
  state: StateStore;
  box: () => SecretBox;
  /** The saved-guardrail store, when that plugin is loaded. */
  guardrails: () => SavedGuardrailStore | undefined;
  logger?: Logger;
  refreshMs?: number;
}

export class ConfigStore {
  private readonly snapshot: StoredSnapshot<ConfigSet>;
  private last: ConfigSet | undefined;
  /** Each workspace's default config (`is_default`), as the route a call that names none takes. */
  private defaults = new Map<string, ModelRoute>();

  constructor(private readonly o: ConfigStoreOptions) {
    this.snapshot = new StoredSnapshot({ name: 'saved-configs', state: o.state, load: () => this.load(), logger: o.logger, refreshMs: o.refreshMs });
  }

  /** Rows unchanged since the last load keep their entries (and so their config objects). */
  private async load(): Promise<ConfigSet> {
    const rows = await this.o.database.select(savedConfigs, { fresh: true });
    const defaults = new Map<string, ModelRoute>();
    for (const row of rows) {
      if (!row.is_default) continue;
      const before = this.defaults.get(row.workspace_id);
      defaults.set(row.workspace_id, before?.savedConfig === row.id ? before : Object.freeze({ savedConfig: row.id }));
    }
    this.defaults = defaults;
    this.last = reindex(rows, this.last, {
      slugKey: (row) => `${row.workspace_id}\n${row.slug}`,
      build: (row, stamp): ConfigEntry => {
        const config = this.withSecrets(row);
        return {
          id: row.id,
          organisationId: row.organisation_id,
          workspaceId: row.workspace_id,
          stamp,
          config,
          refs: config !== undefined && stringEntries(config).length > 0,
          built: undefined,
          builtFor: -1,
        };
      },
    });
    return this.last;
  }

  /**
   * The config with its secrets put back; undefined when they do not open (another GATEWAY_ENCRYPTION_KEY, or sealed
   * for another row): such a config is refused when used, never run without its secrets or with another row's.
   */
  private withSecrets(row: ConfigRow): GatewayConfig | undefined {
    try {
      return joinSecrets(row.config, openSecrets(row.secrets, this.o.box, configSecretsAt(row.id))) as GatewayConfig;
    } catch {
      this.o.logger?.error({ config: row.id }, 'the secrets of a saved config cannot be decrypted (was GATEWAY_ENCRYPTION_KEY changed, or were they copied from another row?)');
      return undefined;
    }
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

  /** The default config of a workspace, as a route (service `modelRouting`); from memory. */
  defaultRoute(workspaceId: string): ModelRoute | undefined {
    return this.defaults.get(workspaceId);
  }

  /** Completed reloads (tests wait on it). */
  get version(): number {
    return this.snapshot.version;
  }

  /**
   * `x-gateway-config: <id or slug>`. An id is global; a slug is looked up in the caller's workspace. Another
   * organisation's config is unknown (undefined); another workspace's is 403, except for an organisation-service
   * key, which acts for the whole organisation.
   */
  readonly resolve: SavedConfigResolver = (ref: string, caller: Caller | undefined) => {
    if (!caller) throw Errors.forbidden('A saved config is used by an authenticated caller only');
    const set = this.snapshot.current;
    const entry = set.byId.get(ref) ?? set.bySlug.get(`${caller.workspaceId}\n${ref}`);
    if (!entry || entry.organisationId !== caller.organisationId) return undefined;
    if (entry.workspaceId !== caller.workspaceId && caller.keyType !== 'organisation-service')
      throw Errors.forbidden(`The saved config ${JSON.stringify(ref)} belongs to another workspace`);
    const config = entry.config;
    if (!config) throw Errors.internal(`The secrets of the saved config ${entry.id} cannot be decrypted`);
    // The request log records which saved config a call used (config_id) from this mark.
    markSavedConfig(config, entry.id);
    if (!entry.refs) return config;
    const guardrails = this.o.guardrails();
    const generation = guardrails?.generation ?? -1;
    if (entry.built === undefined || entry.builtFor !== generation) {
      entry.built = withGuardrails(entry, config, guardrails);
      entry.builtFor = generation;
      markSavedConfig(entry.built, entry.id);
    }
    return entry.built;
  };
}

/** The config with each string guardrail entry replaced by the saved guardrail it names, for its workspace. */
function withGuardrails(entry: ConfigEntry, config: GatewayConfig, guardrails: SavedGuardrailStore | undefined): GatewayConfig {
  const copy: Record<string, unknown> = { ...config };
  for (const key of GUARDRAIL_LISTS) {
    const list = config[key];
    if (!Array.isArray(list)) continue;
    copy[key] = list.map((item) => {
      if (typeof item !== 'string') return item;
      const found = guardrails?.find(entry.organisationId, entry.workspaceId, item);
      // The hook result keeps the name the config used, unless the guardrail names itself.
      if (found) return { ...found.entry, id: typeof found.entry.id === 'string' ? found.entry.id : item };
      return { id: item, deny: true, [MISSING_GUARDRAIL_CHECK]: {} };
    });
  }
  return copy as GatewayConfig;
}
