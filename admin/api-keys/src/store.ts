/**
 * Writes of API keys: create, update, delete, rotate, reveal. Every write is one statement (or one transaction),
 * and is followed by the announcement that makes every process's verifier forget the key. Rotations are
 * conditional updates on the current hash, so two processes (or two requests) never both rotate one key.
 */
import type { SealedAt, SecretBox } from '@gateway/admin-kit';
import { and, eq, type Columns, type Database, type NewRow, type StateStore } from '@gateway/sdk';
import type { ApiKeyClock } from './clock.ts';
import { DAY_MS, DEFAULT_TRANSITION_MS } from './policy.ts';
import { generateSecret, hashSecret, prefixHint } from './secrets.ts';
import { apiKeys, type ApiKeyRow } from './tables.ts';
import type { ApiKeyVerifier } from './verifier.ts';

export interface StoreDeps {
  database: Database;
  state: StateStore;
  verifier: ApiKeyVerifier;
  clock: ApiKeyClock;
  /** API_KEY_PREFIX. */
  keyPrefix: string;
  /** The box that seals a scheduled rotation's secret; throws when the deployment has no encryption key. */
  secretBox: () => SecretBox;
}

/** Where a scheduled rotation's sealed secret is bound (admin-kit crypto.ts): it opens only in its own key's row. */
const pendingSecretAt = (id: string): SealedAt => ({ table: apiKeys.name, id, field: 'pending_secret' });

export type NewKey = Omit<NewRow<typeof apiKeys>, 'hash' | 'prefix_hint' | 'created_at' | 'updated_at'>;

export type KeyChanges = Partial<
  Pick<ApiKeyRow, 'name' | 'description' | 'scopes' | 'status' | 'expires_at' | 'rotation_period_days' | 'next_rotation_at' | 'key_transition_period_ms'>
>;

export class ApiKeyStore {
  constructor(private readonly d: StoreDeps) {}

  /** A key of the organisation, read from the writer. */
  async get(organisationId: string, id: string): Promise<ApiKeyRow | undefined> {
    const row = await this.d.database.findOne(apiKeys, 'id', id, { fresh: true });
    return row && row.organisation_id === organisationId ? row : undefined;
  }

  /**
   * Inserts a key with a new secret; resolves to the row and the secret (to show once). `forPickup`: the secret is
   * also sealed in the row, to be picked up once by the key's user with /reveal (for a key whose maker is not
   * its user; the caller then shows the secret to nobody).
   */
  async create(key: NewKey, options: { forPickup?: boolean } = {}): Promise<{ row: ApiKeyRow; secret: string }> {
    const secret = generateSecret(this.d.keyPrefix);
    const now = this.d.clock.now();
    const id = key.id ?? crypto.randomUUID();
    await this.d.database.insert(apiKeys, {
      ...key,
      id,
      hash: hashSecret(secret),
      prefix_hint: prefixHint(secret, this.d.keyPrefix),
      pending_secret: options.forPickup ? this.d.secretBox().seal(secret, pendingSecretAt(id)) : null,
      created_at: now,
      updated_at: now,
    });
    const row = await this.mustGet(key.organisation_id, id);
    await this.changed(row.id);
    return { row, secret };
  }

  async update(row: ApiKeyRow, changes: KeyChanges): Promise<ApiKeyRow> {
    await this.d.database.update(apiKeys, { ...changes, updated_at: this.d.clock.now() }, (c) => eq(c.id, row.id));
    await this.changed(row.id);
    return this.mustGet(row.organisation_id, row.id);
  }

  async remove(row: ApiKeyRow): Promise<void> {
    await this.d.database.delete(apiKeys, (c) => eq(c.id, row.id));
    await this.changed(row.id);
  }

  /**
   * A new secret for `row`; the old one keeps working for `transitionMs`. Manual: the next scheduled rotation is a
   * whole period away. Scheduled: the secret is sealed for pickup and the next rotation is one period after the
   * one due. Undefined when another request or process rotated the key first.
   */
  async rotate(row: ApiKeyRow, options: { transitionMs?: number; scheduled: boolean }): Promise<{ row: ApiKeyRow; secret: string } | undefined> {
    const now = this.d.clock.now();
    const secret = generateSecret(this.d.keyPrefix);
    const transitionMs = options.transitionMs ?? row.key_transition_period_ms ?? DEFAULT_TRANSITION_MS;
    const periodMs = row.rotation_period_days === null ? null : row.rotation_period_days * DAY_MS;
    let next: number | null = null;
    if (periodMs !== null) {
      next = options.scheduled && row.next_rotation_at !== null ? row.next_rotation_at + periodMs : now + periodMs;
      if (next <= now) next = now + periodMs; // the gateway was down for more than a period: no catching up
    }
    const matched = await this.d.database.update(
      apiKeys,
      {
        hash: hashSecret(secret),
        prefix_hint: prefixHint(secret, this.d.keyPrefix),
        previous_hash: row.hash,
        previous_expires_at: now + transitionMs,
        last_rotated_at: now,
        next_rotation_at: next,
        pending_secret: options.scheduled ? this.d.secretBox().seal(secret, pendingSecretAt(row.id)) : null,
        updated_at: now,
      },
      // The claim: only the request or process that still sees the old hash (and, scheduled, the same due time) wins.
      (c) =>
        options.scheduled
          ? and(eq(c.id, row.id), eq(c.hash, row.hash), eq(c.status, 'active'), eq(c.next_rotation_at, row.next_rotation_at ?? -1))
          : and(eq(c.id, row.id), eq(c.hash, row.hash)),
    );
    if (matched === 0) return undefined;
    await this.changed(row.id);
    return { row: await this.mustGet(row.organisation_id, row.id), secret };
  }

  /** A scheduled rotation's secret, handed out once; undefined when none waits (or another caller took it). */
  async reveal(row: ApiKeyRow): Promise<{ row: ApiKeyRow; secret: string } | undefined> {
    const sealed = row.pending_secret;
    if (sealed === null) return undefined;
    const matched = await this.d.database.update(apiKeys, { pending_secret: null, updated_at: this.d.clock.now() }, (c) =>
      and(eq(c.id, row.id), eq(c.pending_secret, sealed)),
    );
    if (matched === 0) return undefined;
    return { row: await this.mustGet(row.organisation_id, row.id), secret: this.d.secretBox().open(sealed, pendingSecretAt(row.id)) };
  }

  /** Deletes the workspace-user keys of a user: in one workspace, or (null) in all of the organisation. */
  async removeUserKeys(organisationId: string, userId: string, workspaceId: string | null): Promise<string[]> {
    const where = (c: Columns<(typeof apiKeys)['columns']>) =>
      and(eq(c.organisation_id, organisationId), eq(c.user_id, userId), eq(c.type, 'workspace-user'), workspaceId === null ? undefined : eq(c.workspace_id, workspaceId));
    const rows = await this.d.database.select(apiKeys, { where, fresh: true });
    if (rows.length === 0) return [];
    await this.d.database.delete(apiKeys, where);
    for (const row of rows) await this.changed(row.id);
    return rows.map((r) => r.id);
  }

  /** Every process forgets what it cached of the key. */
  changed(id: string): Promise<void> {
    return this.d.verifier.changed(this.d.state, id);
  }

  private async mustGet(organisationId: string, id: string): Promise<ApiKeyRow> {
    const row = await this.get(organisationId, id);
    if (!row) throw new Error(`API key ${id} vanished while it was being written`);
    return row;
  }
}
