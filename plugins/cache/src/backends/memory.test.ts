import { describe, expect, test } from 'bun:test';
import { MemoryBackend } from './memory.ts';

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe('in-process store', () => {
  test('least recently used goes first once the byte bound is passed', () => {
    const store = new MemoryBackend(10_000);
    for (let i = 0; i < 4; i++) store.put(`k${i}`, bytes(2_000, i), 60);
    expect(store.peek('k0')?.[0]).toBe(0); // k0 is now the most recent
    store.put('k4', bytes(2_000, 4), 60);
    expect(store.bytes).toBeLessThanOrEqual(10_000);
    expect(store.peek('k1')).toBeNull(); // the least recently used
    expect(store.peek('k0')).not.toBeNull();
    expect(store.peek('k4')).not.toBeNull();
    expect(store.stats.evictions).toBeGreaterThan(0);
  });

  test('random reads and writes keep the recency order and the byte count of a reference model', () => {
    const store = new MemoryBackend(50_000);
    const model = new Map<string, number>(); // key -> size, in recency order
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 5_000; i++) {
      const key = `k${rnd(60)}`;
      if (rnd(3) === 0) {
        const hit = store.peek(key);
        expect(hit !== null).toBe(model.has(key));
        if (model.has(key)) {
          const size = model.get(key) as number;
          model.delete(key);
          model.set(key, size);
        }
      } else {
        const size = 100 + rnd(3_000);
        store.put(key, bytes(size), 60);
        model.delete(key);
        model.set(key, size + key.length * 2 + 128);
        let total = [...model.values()].reduce((a, b) => a + b, 0);
        for (const [k, v] of model) {
          if (total <= 50_000) break;
          model.delete(k);
          total -= v;
        }
      }
      expect(store.keys()).toEqual([...model.keys()]);
      expect(store.bytes).toBe([...model.values()].reduce((a, b) => a + b, 0));
    }
  });

  test('the bound holds whatever is written', () => {
    const store = new MemoryBackend(1_000_000);
    for (let i = 0; i < 5_000; i++) store.put(`key-${i}`, bytes(100 + (i % 1_000)), 60);
    expect(store.bytes).toBeLessThanOrEqual(1_000_000);
    expect(store.size).toBeGreaterThan(100);
  });

  test('entries expire; too large values and ttl 0 are not kept; replacing counts once', () => {
    let now = 1_000;
    const store = new MemoryBackend(100_000, () => now);
    store.put('a', bytes(10), 1);
    store.put('a', bytes(10), 1);
    expect(store.size).toBe(1);
    now += 999;
    expect(store.peek('a')).not.toBeNull();
    now += 1;
    expect(store.peek('a')).toBeNull();
    expect(store.bytes).toBe(0);
    store.put('big', bytes(30_000), 60);
    expect(store.peek('big')).toBeNull();
    store.put('zero', bytes(1), 0);
    expect(store.peek('zero')).toBeNull();
  });
});
