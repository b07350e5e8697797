import { expect, test } from 'bun:test';
import { TICK_MS, watch, watchedCount } from './deadlines.ts';

test('a watch expires within a tick of its deadline; a released one never does', async () => {
  const started = performance.now();
  let expiredAt = 0;
  let releasedFired = false;
  watch({ deadline: started + 60, expire: () => (expiredAt = performance.now()) });
  const release = watch({ deadline: started + 60, expire: () => (releasedFired = true) });
  release();
  release(); // idempotent
  await Bun.sleep(60 + TICK_MS * 3);
  expect(expiredAt - started).toBeGreaterThanOrEqual(60);
  expect(expiredAt - started).toBeLessThan(60 + TICK_MS * 3);
  expect(releasedFired).toBe(false);
  expect(watchedCount()).toBe(0);
});

test('slow runs once when the watch outlives slowAt, and never for a watch released before', async () => {
  const now = performance.now();
  let slowCalls = 0;
  let fastSlowCalls = 0;
  const releaseSlow = watch({ deadline: now + 10_000, expire: () => {}, slowAt: now + 10, slow: () => slowCalls++ });
  const releaseFast = watch({ deadline: now + 10_000, expire: () => {}, slowAt: now + 10, slow: () => fastSlowCalls++ });
  releaseFast();
  await Bun.sleep(TICK_MS * 4);
  expect(slowCalls).toBe(1);
  expect(fastSlowCalls).toBe(0);
  releaseSlow();
});
