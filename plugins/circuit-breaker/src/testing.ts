/** Test helpers: a StateStore in a Map that can be switched "down" (every call rejects), like Redis going away. */
import type { ConsumeResult, CounterAddition, CounterCharge, StateStore } from '@gateway/sdk';

export class FakeStore implements StateStore {
  readonly kind: 'memory' | 'redis';
  readonly data = new Map<string, string>();
  /** While true, every call rejects. */
  down = false;
  calls = 0;

  constructor(kind: 'memory' | 'redis' = 'memory') {
    this.kind = kind;
  }

  private check(): void {
    this.calls++;
    if (this.down) throw new Error('connection refused');
  }

  async get(key: string): Promise<string | null> {
    this.check();
    return this.data.get(key) ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    this.check();
    this.data.set(key, value);
  }

  async del(key: string): Promise<void> {
    this.check();
    this.data.delete(key);
  }

  async publish(): Promise<void> {
    this.check();
  }

  subscribe(): () => void {
    return () => {};
  }

  async incr(key: string, by: number): Promise<number> {
    this.check();
    const value = Number(this.data.get(key) ?? 0) + by;
    this.data.set(key, String(value));
    return value;
  }

  async consume(charges: readonly CounterCharge[]): Promise<ConsumeResult> {
    this.check();
    const values = charges.map((c) => Number(this.data.get(c.key) ?? 0));
    const refusedAt = charges.findIndex((c, i) => values[i]! >= c.limit);
    if (refusedAt >= 0) return { admitted: false, values, refusedAt };
    charges.forEach((c, i) => this.data.set(c.key, String((values[i] = values[i]! + c.cost))));
    return { admitted: true, values, refusedAt: -1 };
  }

  async add(additions: readonly CounterAddition[]): Promise<void> {
    this.check();
    for (const a of additions) this.data.set(a.key, String(Number(this.data.get(a.key) ?? 0) + a.by));
  }

  async read(keys: readonly string[]): Promise<number[]> {
    this.check();
    return keys.map((k) => Number(this.data.get(k) ?? 0));
  }

  async close(): Promise<void> {}
}
