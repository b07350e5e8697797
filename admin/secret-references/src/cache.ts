/**
 * A small in-memory TTL cache in which concurrent misses of one key share one load. Secrets and tokens stay in the
 * process: they never go to the shared state store. A failed load is not kept.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly maxEntries = 10_000) {}

  /** The live value of `key`, or the result of `load`, kept for `ttlMs` (or what the function gives for it). */
  get(key: string, load: () => Promise<V>, ttlMs: number | ((value: V) => number)): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return Promise.resolve(hit.value);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const started = load()
      .then((value) => {
        const ttl = typeof ttlMs === 'function' ? ttlMs(value) : ttlMs;
        if (ttl > 0) this.put(key, value, ttl);
        return value;
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, started);
    return started;
  }

  private put(key: string, value: V, ttlMs: number): void {
    if (this.entries.size >= this.maxEntries) {
      const now = Date.now();
      for (const [k, entry] of this.entries) if (entry.expires <= now) this.entries.delete(k);
      // Still full: drop the oldest insertions (Map keeps insertion order).
      for (const k of this.entries.keys()) {
        if (this.entries.size < this.maxEntries) break;
        this.entries.delete(k);
      }
    }
    this.entries.delete(key);
    this.entries.set(key, { value, expires: Date.now() + ttlMs });
  }

  /** Forgets every key that starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
