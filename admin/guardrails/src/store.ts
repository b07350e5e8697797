/**
 * Saved guardrails on the hot path: every stored guardrail held in memory (StoredSnapshot), secrets put back in,
 * deeply frozen. Header configs look guardrails up by id for the caller's organisation and workspace through the
 * `savedGuardrails` service; saved configs look them up by id or slug for their own workspace (`find`).
 *
 * Parsed configs are cached by header value in @gateway/config, and a config that names a saved guardrail was
 * validated (and its plan built) against the guardrail as it was: every reload that brings a change, in every
 * process, clears that cache and bumps `generation`, on which saved configs rebuild their copies.
 */
import { joinSecrets, openSecrets, reindex, type SecretBox, type StoredIndex, StoredSnapshot } from '@gateway/admin-kit';
import type { Database, Logger, Row, SavedGuardrail, SavedGuardrailResolver, StateStore } from '@gateway/sdk';
import { guardrailSecretsAt, savedGuardrails } from './tables.ts';

export interface StoredGuardrail {
  readonly id: string;
  readonly organisationId: string;
  /** Null: organisation-wide. */
  readonly workspaceId: string | null;
  readonly slug: string;
  readonly name: string;
  /** The entry with its secrets, deeply frozen. */
  readonly entry: SavedGuardrail;
}

/** Service `savedGuardrailStore`: what saved configs need of guardrails. */
export interface SavedGuardrailStore {
  /** Bumped by every reload: objects built from guardrails are stale when it moved. */
  readonly generation: number;
  /** A guardrail the workspace may use, by id or slug: its own workspace's first, then the organisation's. */
  find(organisationId: string, workspaceId: string, ref: string): StoredGuardrail | undefined;
}

/** The check of a guardrail whose secrets cannot be opened: no such check exists, so it fails and the entry denies. */
export const UNREADABLE_GUARDRAIL_CHECK = 'saved_guardrail.unreadable';

type GuardrailRow = Row<typeof savedGuardrails>;

/** bySlug: `<organisation>\n<workspace or empty>\n<slug>` */
type GuardrailSet = StoredIndex<Held>;

const slugKey = (organisationId: string, workspaceId: string | null, slug: string) => `${organisationId}\n${workspaceId ?? ''}\n${slug}`;

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || Object.isFrozen(node)) continue;
    Object.freeze(node);
    for (const child of Object.values(node)) stack.push(child);
  }
  return value;
}

export interface GuardrailStoreOptions {
  database: Database;
  state: StateStore;
  /** Opens sealed secrets; called only when a stored guardrail has some. */
  box: () => SecretBox;
  logger?: Logger;
  refreshMs?: number;
  /** Called when the set changed: the host forgets parsed configs (`configValidator.clearCache`). */
  onChange?: () => void;
}

/** A stored guardrail and what tells whether its row changed since it was built. */
interface Held extends StoredGuardrail {
  readonly stamp: string;
}

export class GuardrailStore implements SavedGuardrailStore {
  private readonly snapshot: StoredSnapshot<GuardrailSet>;
  private last: GuardrailSet | undefined;
  private changes = 0;

  constructor(private readonly o: GuardrailStoreOptions) {
    this.snapshot = new StoredSnapshot({
      name: 'saved-guardrails',
      state: o.state,
      load: () => this.load(),
      logger: o.logger,
      refreshMs: o.refreshMs,
      // A load that finds nothing changed hands back the same set, so a periodic reload costs no cache.
      onReload: (set, previous) => {
        if (set === previous) return;
        this.changes++;
        // Configs that name a guardrail were validated and planned against the old one.
        this.o.onChange?.();
      },
    });
  }

  /** Rows unchanged since the last load keep their objects; nothing changed at all: the same set. */
  private async load(): Promise<GuardrailSet> {
    const rows = await this.o.database.select(savedGuardrails, { fresh: true });
    this.last = reindex(rows, this.last, {
      slugKey: (row) => slugKey(row.organisation_id, row.workspace_id, row.slug),
      build: (row, stamp): Held =>
        deepFreeze({
          id: row.id,
          organisationId: row.organisation_id,
          workspaceId: row.workspace_id,
          slug: row.slug,
          name: row.name,
          entry: this.withSecrets(row),
          stamp,
        }),
    });
    return this.last;
  }

  /**
   * The entry with its secrets put back. Secrets that do not open (another GATEWAY_ENCRYPTION_KEY, or sealed for
   * another row) are never replaced by nothing: the entry becomes one that denies, its check unknown, so that what it
   * guarded is refused rather than run without it or with another guardrail's secret.
   */
  private withSecrets(row: GuardrailRow): SavedGuardrail {
    try {
      return joinSecrets(row.entry, openSecrets(row.secrets, this.o.box, guardrailSecretsAt(row.id)));
    } catch {
      this.o.logger?.error({ guardrail: row.id }, 'the secrets of a saved guardrail cannot be decrypted (was GATEWAY_ENCRYPTION_KEY changed, or were they copied from another row?): it denies');
      return { deny: true, [UNREADABLE_GUARDRAIL_CHECK]: {} };
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

  /** Bumped by every reload that brought a change. */
  get generation(): number {
    return this.changes;
  }

  /**
   * Service `savedGuardrails`: a guardrail entry by id, for header configs (core/config), only when the scope may use
   * it: a guardrail of its organisation that is organisation-wide or of its workspace (any workspace for a null one).
   * Any other is undefined, as an unknown id is, so that ids cannot be probed.
   */
  readonly resolve: SavedGuardrailResolver = (id, scope) => {
    const found = this.snapshot.current.byId.get(id);
    if (!found || found.organisationId !== scope.organisationId) return undefined;
    if (found.workspaceId !== null && scope.workspaceId !== null && found.workspaceId !== scope.workspaceId) return undefined;
    return found.entry;
  };

  byId(id: string): StoredGuardrail | undefined {
    return this.snapshot.current.byId.get(id);
  }

  find(organisationId: string, workspaceId: string, ref: string): StoredGuardrail | undefined {
    const set = this.snapshot.current;
    const byId = set.byId.get(ref);
    if (byId) return byId.organisationId === organisationId && (byId.workspaceId === null || byId.workspaceId === workspaceId) ? byId : undefined;
    return set.bySlug.get(slugKey(organisationId, workspaceId, ref)) ?? set.bySlug.get(slugKey(organisationId, null, ref));
  }
}
