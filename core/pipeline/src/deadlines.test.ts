import { expect, test } from 'bun:test';
import { TICK_MS, watch, watchedCount } from './deadlines.ts';

/** Waits until `done()` holds, at most `ms` (a guard against hanging: timers run late on a loaded machine). */
async function until(done: () => boolean, ms = 5_000): Promise<void> {
  for (const end = performance.now() + ms; !done() && performance.now() < end; ) await Bun.sleep(TICK_MS);
}

test('a watch expires at its deadline, not before; a released one never does', async () => {
  const started = performance.now();
  let expiredAt = 0;
  let releasedFired = false;
  watch({ deadline: started + 60, expire: () => (expiredAt = performance.now()) });
  const release = watch({ deadline: started + 60, expire: () => (releasedFired = true) });
  release();
  release(); // idempotent
  await until(() => expiredAt > 0);
  await Bun.sleep(TICK_MS * 3); // the released one had as long again to fire
  expect(expiredAt - started).toBeGreaterThanOrEqual(60);
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
  await until(() => slowCalls > 0);
  await Bun.sleep(TICK_MS * 3); // time for a second call, which must not come
  expect(slowCalls).toBe(1);
  expect(fastSlowCalls).toBe(0);
  releaseSlow();
});
