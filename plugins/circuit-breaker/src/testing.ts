/** Test helpers: a StateStore in a Map that can be switched "down" (every call rejects), like Redis going away. */
import type { StateStore } from '@gateway/sdk';

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

  async close(): Promise<void> {}
}
