import type { CacheBackend } from '../stage.ts';

interface Slot {
  key: string;
  value: Uint8Array;
  /** Epoch ms. */
  expiresAt: number;
  /** What the slot counts against the bound: the value, the key, and a fixed overhead. */
  size: number;
  /** Recency list: towards the least (`older`) and the most (`newer`) recently used. */
  older: Slot | undefined;
  newer: Slot | undefined;
}

/** Bytes counted per entry on top of its value and key (map slot, list node, timestamps). */
const OVERHEAD = 128;

/**
 * The in-process store: least-recently-used, bounded by bytes (values + keys + a fixed overhead per entry). The
 * recency order is a doubly-linked list beside the `Map`, so that a read only relinks two nodes: re-inserting into a
 * large `Map` to move a key to its end costs tens of microseconds in JavaScriptCore once the map holds thousands
 * of keys. Inserting past the bound evicts from the least recently used end; expired entries go when they are read
 * or reach that end. Values larger than a quarter of the bound are not kept.
 */
export class MemoryBackend implements CacheBackend {
  readonly name = 'memory';
  private readonly slots = new Map<string, Slot>();
  private oldest: Slot | undefined;
  private newest: Slot | undefined;
  private used = 0;
  readonly stats = { hits: 0, misses: 0, sets: 0, evictions: 0 };

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes counted against the bound. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.slots.size;
  }

  /** The value, synchronously (the stage's fast path); null when absent or expired. */
  peek(key: string): Uint8Array | null {
    const slot = this.slots.get(key);
    if (!slot) {
      this.stats.misses++;
      return null;
    }
    if (slot.expiresAt <= this.now()) {
      this.remove(slot);
      this.stats.misses++;
      return null;
    }
    if (slot !== this.newest) {
      this.unlink(slot);
      this.link(slot);
    }
    this.stats.hits++;
    return slot.value;
  }

  async get(key: string): Promise<Uint8Array | null> {
    return this.peek(key);
  }

  /** Stores synchronously (`set` is the same for the CacheBackend contract). */
  put(key: string, value: Uint8Array, ttlSeconds: number): void {
    const old = this.slots.get(key);
    if (old) this.remove(old);
    const size = value.byteLength + key.length * 2 + OVERHEAD;
    if (!(ttlSeconds > 0) || size > this.maxBytes / 4) return;
    const slot: Slot = { key, value, expiresAt: this.now() + ttlSeconds * 1000, size, older: undefined, newer: undefined };
    this.slots.set(key, slot);
    this.link(slot);
    this.used += size;
    this.stats.sets++;
    while (this.used > this.maxBytes && this.oldest) {
      this.remove(this.oldest);
      this.stats.evictions++;
    }
  }

  async set(key: string, value: Uint8Array, ttlSeconds: number): Promise<void> {
    this.put(key, value, ttlSeconds);
  }

  async delete(key: string): Promise<void> {
    const slot = this.slots.get(key);
    if (slot) this.remove(slot);
  }

  clear(): void {
    this.slots.clear();
    this.oldest = this.newest = undefined;
    this.used = 0;
  }

  /** Keys from the least to the most recently used (tests). */
  keys(): string[] {
    const out: string[] = [];
    for (let s = this.oldest; s; s = s.newer) out.push(s.key);
    return out;
  }

  private remove(slot: Slot): void {
    this.slots.delete(slot.key);
    this.unlink(slot);
    this.used -= slot.size;
  }

  /** As the most recently used. */
  private link(slot: Slot): void {
    slot.older = this.newest;
    slot.newer = undefined;
    if (this.newest) this.newest.newer = slot;
    else this.oldest = slot;
    this.newest = slot;
  }

  private unlink(slot: Slot): void {
    if (slot.older) slot.older.newer = slot.newer;
    else this.oldest = slot.newer;
    if (slot.newer) slot.newer.older = slot.older;
    else this.newest = slot.older;
    slot.older = slot.newer = undefined;
  }
}
