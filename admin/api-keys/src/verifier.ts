/**
 * Turns an `x-gateway-api-key` secret into the Caller, with a cache so that the hot path normally does no database
 * round trip: hash → caller for 60 s, hash → "no such key" for 5 s, bounded in size. A key's own expiry is checked
 * on every hit, so a cached key stops working the moment it expires; so does the previous secret of a rotated key
 * at the end of its transition period. `last_used_at` is written at most once a minute per key, without the
 * request waiting for it. A change of a key anywhere is announced on the state store (`listen`), so every process
 * forgets what it cached of that key.
 */
import { asc, eq, and, or, type Caller, type Database, type Logger, type StateStore } from '@gateway/sdk';
import { hashSecret } from './secrets.ts';
import { workspaces } from '@gateway/admin-identity';
import { apiKeys } from './tables.ts';

export interface ApiKeyVerifierOptions {
  logger?: Logger;
  positiveTtlMs?: number;
  negativeTtlMs?: number;
  /** Cached hashes at most; the oldest entry goes first. */
  maxEntries?: number;
  lastUsedIntervalMs?: number;
  now?: () => number;
}

interface CacheEntry {
  caller: Caller | undefined;
  /** The key the hash belongs to, also when it was refused (revoked, expired): invalidate() finds it by this. */
  apiKeyId: string | undefined;
  /** When this cache entry goes stale. */
  staleAt: number;
  /** When this secret stops working: the key's expires_at, or the end of a previous secret's transition (null: never). */
  keyExpiresAt: number | null;
}

// Longer input is no key of ours; do not hash megabytes sent as a header.
const MAX_SECRET_LENGTH = 512;

/** How many recently seen secrets `peek` recognises without hashing. */
const RECENT_SECRETS = 1_000;

/** The state store channel on which a changed key's id (or `*`) is announced to every process. */
export const API_KEY_CHANGES_CHANNEL = 'api-keys:changed';

export class ApiKeyVerifier {
  /** `lookups` counts database round trips; hits and misses count verify() calls. */
  readonly stats = { hits: 0, misses: 0, lookups: 0 };
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Recently verified secrets to their (shared) cache entries, so that a repeat caller is recognised without hashing.
   * In memory only and bounded; the database never holds a secret.
   */
  private readonly recent = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();
  private readonly lastUsed = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();
  private readonly o: Required<Omit<ApiKeyVerifierOptions, 'logger'>>;
  private readonly logger: Logger | undefined;
  /** Bumped by invalidate(), so that a lookup started before it does not re-fill the cache with old data. */
  private generation = 0;

  constructor(
    private readonly database: Database,
    options: ApiKeyVerifierOptions = {},
  ) {
    this.logger = options.logger;
    this.o = {
      positiveTtlMs: options.positiveTtlMs ?? 60_000,
      negativeTtlMs: options.negativeTtlMs ?? 5_000,
      maxEntries: options.maxEntries ?? 10_000,
      lastUsedIntervalMs: options.lastUsedIntervalMs ?? 60_000,
      now: options.now ?? Date.now,
    };
  }

  /** The caller for a secret, or undefined when it is unknown, revoked or expired. Rejects only on database errors. */
  async verify(secret: string): Promise<Caller | undefined> {
    if (!secret || secret.length > MAX_SECRET_LENGTH) return undefined;
    const hash = hashSecret(secret);
    const now = this.o.now();
    let entry = this.cache.get(hash);
    if (entry && entry.staleAt > now) {
      this.stats.hits++;
    } else {
      this.stats.misses++;
      entry = await this.lookupOnce(hash);
    }
    const { caller } = entry;
    if (!caller || (entry.keyExpiresAt !== null && entry.keyExpiresAt <= this.o.now())) return undefined;
    this.touch(caller.apiKeyId);
    return caller;
  }

  /**
   * The cached answer for a secret, without a promise: a Caller, or undefined when the secret must be looked up
   * with `verify` (not cached, stale, or refused).
   */
  peek(secret: string): Caller | undefined {
    if (!secret || secret.length > MAX_SECRET_LENGTH) return undefined;
    const now = this.o.now();
    let entry = this.recent.get(secret);
    if (!entry || entry.staleAt <= now) {
      entry = this.cache.get(hashSecret(secret));
      if (!entry || entry.staleAt <= now || !entry.caller) return undefined;
      if (this.recent.size >= RECENT_SECRETS) this.recent.clear();
      this.recent.set(secret, entry);
    }
    if (!entry.caller) return undefined;
    if (entry.keyExpiresAt !== null && entry.keyExpiresAt <= now) return undefined;
    this.stats.hits++;
    this.touch(entry.caller.apiKeyId);
    return entry.caller;
  }

  /** Forgets cached answers: all of them, or those of one key (after a revoke, rotation or scope change). */
  invalidate(apiKeyId?: string): void {
    this.generation++;
    if (apiKeyId === undefined) {
      this.cache.clear();
      this.recent.clear();
    } else {
      for (const [hash, entry] of this.cache) if (entry.apiKeyId === apiKeyId) this.cache.delete(hash);
      for (const [secret, entry] of this.recent) if (entry.apiKeyId === apiKeyId) this.recent.delete(secret);
    }
  }

  /**
   * Forgets a key here and in every process sharing the state store. Call after the change is stored. A failed
   * announcement is logged: the other processes' entries go stale within the positive TTL (60 s).
   */
  async changed(state: StateStore, apiKeyId?: string): Promise<void> {
    this.invalidate(apiKeyId);
    await state.publish(API_KEY_CHANGES_CHANNEL, apiKeyId ?? '*').catch((error: unknown) => {
      this.logger?.warn({ apiKeyId, error: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'could not announce an API key change to other processes');
    });
  }

  /** Follows the changes announced by every process; returns the function that stops listening. */
  listen(state: StateStore): () => void {
    return state.subscribe(API_KEY_CHANGES_CHANNEL, (message) => this.invalidate(message === '*' ? undefined : message));
  }

  /** Resolves when the pending `last_used_at` writes are done (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  /** Concurrent misses of one hash share one query. */
  private lookupOnce(hash: string): Promise<CacheEntry> {
    let lookup = this.inFlight.get(hash);
    if (!lookup) {
      const generation = this.generation;
      lookup = this.lookup(hash)
        .then((entry) => {
          if (generation === this.generation) this.remember(hash, entry);
          return entry;
        })
        .finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, lookup);
    }
    return lookup;
  }

  private async lookup(hash: string): Promise<CacheEntry> {
    const now = this.o.now();
    const negative = (apiKeyId?: string): CacheEntry => ({ caller: undefined, apiKeyId, staleAt: now + this.o.negativeTtlMs, keyExpiresAt: null });
    this.stats.lookups++;
    // The current secret, or the previous one of a key rotated less than its transition period ago.
    const rows = await this.database.select(apiKeys, { where: (c) => or(eq(c.hash, hash), eq(c.previous_hash, hash)), limit: 2 });
    const current = rows.find((r) => r.hash === hash);
    const key = current ?? rows.find((r) => r.previous_hash === hash && r.previous_expires_at !== null && r.previous_expires_at > now);
    if (!key) return negative(rows[0]?.id);
    if (key.status !== 'active' || (key.expires_at !== null && key.expires_at <= now)) return negative(key.id);
    let validUntil = key.expires_at;
    if (!current && key.previous_expires_at !== null) validUntil = validUntil === null ? key.previous_expires_at : Math.min(validUntil, key.previous_expires_at);
    const workspaceId = key.workspace_id ?? (await this.defaultWorkspace(key.organisation_id));
    return {
      caller: {
        apiKeyId: key.id,
        organisationId: key.organisation_id,
        workspaceId,
        scopes: Object.freeze([...key.scopes]),
        keyType: key.type,
        userId: key.user_id,
      },
      apiKeyId: key.id,
      staleAt: now + this.o.positiveTtlMs,
      keyExpiresAt: validUntil,
    };
  }

  /** An organisation key acts in the organisation's first active workspace (the one the bootstrap made). */
  private async defaultWorkspace(organisationId: string): Promise<string> {
    const [first] = await this.database.select(workspaces, {
      where: (c) => and(eq(c.organisation_id, organisationId), eq(c.status, 'active')),
      orderBy: (c) => [asc(c.created_at), asc(c.id)],
      limit: 1,
    });
    return first?.id ?? '';
  }

  private remember(hash: string, entry: CacheEntry): void {
    if (!this.cache.has(hash) && this.cache.size >= this.o.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.delete(hash); // re-inserted last: Map order is the eviction order
    this.cache.set(hash, entry);
  }

  private touch(apiKeyId: string): void {
    const now = this.o.now();
    const last = this.lastUsed.get(apiKeyId);
    if (last !== undefined && now - last < this.o.lastUsedIntervalMs) return;
    if (this.lastUsed.size >= this.o.maxEntries) this.lastUsed.clear();
    this.lastUsed.set(apiKeyId, now);
    const write = this.database
      .update(apiKeys, { last_used_at: now }, (c) => eq(c.id, apiKeyId))
      .then(
        () => undefined,
        (err: unknown) => this.logger?.warn({ apiKeyId, error: err instanceof Error ? err.message.slice(0, 300) : String(err) }, 'could not record last_used_at'),
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }
}
