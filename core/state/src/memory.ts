import type { ConsumeResult, CounterAddition, CounterCharge, StateStore } from '@gateway/sdk';
import { Channels } from './channels.ts';

interface Entry {
  value: string;
  expiresAt: number;
}

/** State kept in this process: rate counters, circuit breakers and the like for a single-process gateway. */
export class MemoryStateStore implements StateStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: Timer;

  constructor(sweepIntervalMs = 30_000) {
    // Expired keys are dropped lazily on read and by a periodic sweep, so memory stays bounded by live keys.
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  private live(key: string, now = Date.now()): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: ttlMs ? Date.now() + ttlMs : Number.POSITIVE_INFINITY });
  }

  async del(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async incr(key: string, by: number, ttlMs: number): Promise<number> {
    const now = Date.now();
    const entry = this.live(key, now);
    const value = (entry ? Number(entry.value) : 0) + by;
    this.entries.set(key, { value: String(value), expiresAt: entry?.expiresAt ?? now + ttlMs });
    return value;
  }

  /** Synchronous, so atomic within the process: nothing runs between the check and the consumption. */
  async consume(charges: readonly CounterCharge[]): Promise<ConsumeResult> {
    const now = Date.now();
    const values = charges.map((c) => Number(this.live(c.key, now)?.value ?? 0));
    const refusedAt = charges.findIndex((c, i) => (values[i] as number) >= c.limit);
    if (refusedAt >= 0) return { admitted: false, values, refusedAt };
    charges.forEach((c, i) => {
      if (c.cost === 0) return;
      values[i] = (values[i] as number) + c.cost;
      this.entries.set(c.key, { value: String(values[i]), expiresAt: this.live(c.key, now)?.expiresAt ?? now + c.ttlMs });
    });
    return { admitted: true, values, refusedAt: -1 };
  }

  async add(additions: readonly CounterAddition[]): Promise<void> {
    for (const a of additions) await this.incr(a.key, a.by, a.ttlMs);
  }

  async read(keys: readonly string[]): Promise<number[]> {
    const now = Date.now();
    return keys.map((key) => Number(this.live(key, now)?.value ?? 0));
  }

  private readonly channels = new Channels();

  async publish(channel: string, message: string): Promise<void> {
    this.channels.deliver(channel, message);
  }

  subscribe(channel: string, listener: (message: string) => void): () => void {
    this.channels.add(channel, listener);
    return () => void this.channels.remove(channel, listener);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.channels.clear();
  }
}
