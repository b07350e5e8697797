// Counters of the rate and usage limits: check-and-consume over several counters at once, exact within a process
// (memory) and across processes (Redis: one script, one round trip), additions after the fact, reads.
import { describe, expect, test } from 'bun:test';
import type { StateStore } from '@gateway/sdk';
import { MemoryStateStore } from './memory.ts';
import { RedisStateStore } from './redis.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function connected(store: StateStore): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await store.get('ping');
      return;
    } catch {
      await Bun.sleep(20);
    }
  }
}

const stores: [string, () => Promise<StateStore[]>][] = [
  ['memory', async () => {
    const one = new MemoryStateStore();
    return [one, one];
  }],
  ['redis', async () => {
    const prefix = `test-${crypto.randomUUID()}:`;
    const pair = [new RedisStateStore(REDIS_URL, prefix), new RedisStateStore(REDIS_URL, prefix)];
    await Promise.all(pair.map(connected));
    return pair;
  }],
];

describe.each(stores)('counters (%s)', (_kind, make) => {
  test('admits while every counter is below its limit, consuming each in the same step', async () => {
    const [a] = await make();
    const charges = [
      { key: 'rpm', limit: 3, cost: 1, ttlMs: 60_000 },
      { key: 'tokens', limit: 100, cost: 0, ttlMs: 60_000 },
    ];
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await a!.consume(charges));
    expect(results.map((r) => r.admitted)).toEqual([true, true, true, false]);
    expect(results[2]).toEqual({ admitted: true, values: [3, 0], refusedAt: -1 });
    expect(results[3]).toEqual({ admitted: false, values: [3, 0], refusedAt: 0 });
    await a!.close();
  });

  test('a refusal by one counter consumes none of the others', async () => {
    const [a] = await make();
    await a!.add([{ key: 'tokens', by: 100, ttlMs: 60_000 }]);
    const refused = await a!.consume([
      { key: 'rpm', limit: 10, cost: 1, ttlMs: 60_000 },
      { key: 'tokens', limit: 100, cost: 0, ttlMs: 60_000 },
    ]);
    expect(refused).toEqual({ admitted: false, values: [0, 100], refusedAt: 1 });
    expect(await a!.read(['rpm', 'tokens', 'absent'])).toEqual([0, 100, 0]);
    await a!.close();
  });

  test('fractional additions (a cost in cents) and whole ones add up', async () => {
    const [a] = await make();
    await a!.add([{ key: 'cents', by: 0.25, ttlMs: 60_000 }, { key: 'n', by: 2, ttlMs: 60_000 }]);
    await a!.add([{ key: 'cents', by: 1.5, ttlMs: 60_000 }, { key: 'n', by: 3, ttlMs: 60_000 }]);
    const [cents, n] = await a!.read(['cents', 'n']);
    expect(cents).toBeCloseTo(1.75, 10);
    expect(n).toBe(5);
    expect((await a!.consume([{ key: 'cents', limit: 1.75, cost: 0, ttlMs: 60_000 }])).admitted).toBe(false);
    expect((await a!.consume([{ key: 'cents', limit: 2, cost: 0.125, ttlMs: 60_000 }])).values[0]).toBeCloseTo(1.875, 10);
    await a!.close();
  });

  test('a whole amount added to a counter that holds a fraction (a cost of exactly 2 cents after 0.5)', async () => {
    const [a] = await make();
    await a!.add([{ key: 'c', by: 0.5, ttlMs: 60_000 }]);
    await a!.add([{ key: 'c', by: 2, ttlMs: 60_000 }]);
    expect((await a!.consume([{ key: 'c', limit: 100, cost: 3, ttlMs: 60_000 }])).values[0]).toBeCloseTo(5.5, 10);
    expect((await a!.read(['c']))[0]).toBeCloseTo(5.5, 10);
    await a!.close();
  });

  test('a counter expires with its window', async () => {
    const [a] = await make();
    await a!.consume([{ key: 'short', limit: 5, cost: 1, ttlMs: 50 }]);
    expect(await a!.read(['short'])).toEqual([1]);
    await Bun.sleep(120);
    expect(await a!.read(['short'])).toEqual([0]);
    await a!.close();
  });

  test('many concurrent consumers through two stores never admit more than the limit', async () => {
    const [a, b] = await make();
    const charge = [{ key: 'shared', limit: 50, cost: 1, ttlMs: 60_000 }];
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a! : b!).consume(charge)));
    expect(results.filter((r) => r.admitted)).toHaveLength(50);
    expect(await a!.read(['shared'])).toEqual([50]);
    await a!.close();
    if (b !== a) await b!.close();
  });
});

test('redis down: consume, add and read reject within the command timeout, never hang', async () => {
  // A port nothing listens on (bound and closed again): the store cannot connect.
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const store = new RedisStateStore(`redis://127.0.0.1:${port}`, 'down:');
  const outcomes = await Promise.allSettled([
    store.consume([{ key: 'k', limit: 1, cost: 1, ttlMs: 1000 }]),
    store.add([{ key: 'k', by: 1, ttlMs: 1000 }]),
    store.read(['k']),
  ]);
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
  await store.close();
});
