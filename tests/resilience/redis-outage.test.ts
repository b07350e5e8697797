// Redis stopped under two real gateway processes that share circuits through it (a redis-server of this file's own,
// killed and restarted on the same port; the shared 127.0.0.1:6379 is never touched). Official OpenAI SDK client
// (`maxRetries: 0`), streamed and not.
//
// - Redis down: both gateways keep answering every request with 200, each within ~1 s (ioredis runs with
//   enableOfflineQueue false, so store calls reject at once; the breaker also waits at most 250 ms per store call);
// - the breaker degrades to per-process decisions. What we observe, with failure_threshold 3 and requests sent
//   alternately through gateway 1 and gateway 2 to a primary answering 503: the primary receives 6 calls, not 3:
//   each process counts only its own failures and trips its own circuit after its own 3rd failure (gateway 1 after
//   the 5th request overall, gateway 2 after the 6th); from then on neither calls it. Each process logs once that the
//   store is unavailable;
// - redis-server restarted on the same port (empty: no persistence): the gateways reconnect by themselves (ioredis
//   retry strategy, ≤ 2 s between attempts), the circuits opened during the outage are written back to the store,
//   and circuits are shared again: failures counted across both processes open a new circuit after 3 in total, and
//   the process that did not open it stops calling the primary within ~1 s;
// - Redis frozen (SIGSTOP: connections stay open, nothing answers): requests are still answered 200 within ~1 s
//   (each store call is given up after 250 ms; up to three of them in a row: ~750 ms observed), failures are
//   again counted per process, and circuits are shared again once it answers.

import { afterAll, describe, expect, test } from 'bun:test';
import type { OpenAIMock } from '../mocks/openai-server.ts';
import { type Answer, ask, client, leaf, MODES } from './support.ts';
import { logLines, MIN_COOLDOWN_MS, REFRESH_MS, STORE_PREFIX, useTwoGateways, waitFor } from './redis-support.ts';

const T = 30_000;
/** "each request answers within ~1 s" while Redis is down. */
const FAST_MS = 1_000;
/**
 * Frozen Redis: every store call waits the breaker's full 250 ms before it is skipped, and a request makes up to
 * three of them one after the other (first attempt of a circuit: read its marker, count the failure, then the
 * fallback target's first read), so ~750 ms is expected there; the bound keeps a little slack for a loaded machine.
 */
const FROZEN_MS = 1_200;
const stack = useTwoGateways(4);
const run = crypto.randomUUID().slice(0, 8);
/** How long Redis stays down at least: long enough for ioredis's reconnect delay to reach its 2 s ceiling. */
const OUTAGE_MS = 4_000;
let killedAt = 0;
/** Slowest answer per phase, reported at the end (informational). */
const slowest: Record<string, number> = {};
const note = (phase: string, a: Answer) => {
  slowest[phase] = Math.max(slowest[phase] ?? 0, Math.round(a.ms));
};
afterAll(() => console.info(`[redis-outage] slowest answer per phase (ms): ${JSON.stringify(slowest)}`));

/** Primary A (with its own credentials, hence its own circuit) → B, circuit breaker on every target. */
function fallbackConfig(a: OpenAIMock, b: OpenAIMock, circuit: string) {
  return {
    strategy: { mode: 'fallback' },
    cb_config: { failure_threshold: 3, cooldown_interval: MIN_COOLDOWN_MS },
    targets: [leaf(a, { api_key: `sk-${run}-${circuit}-a` }), leaf(b, { api_key: `sk-${run}-${circuit}-b` })],
  };
}

const pairOf = (stream: boolean): [OpenAIMock, OpenAIMock] => {
  const m = stack().mocks;
  return stream ? [m[2]!, m[3]!] : [m[0]!, m[1]!];
};

function expectOk(a: Answer, text: string, index?: string): void {
  expect(a.error).toBeUndefined();
  expect(a.status).toBe(200);
  expect(a.text).toBe(`You said: ${text}`);
  if (index) expect(a.headers.get('x-gateway-last-used-option-index')).toBe(index);
}

function resetMocks(): void {
  for (const m of stack().mocks) m.reset();
}

/** Open-until markers of circuits in the store (`<gw:><prefix><id>:o` → epoch ms, or 0 when closed by a probe). */
async function openMarkers(): Promise<number[]> {
  const { redis, prefix } = stack();
  return [...(await redis.entries(`${STORE_PREFIX}${prefix}*:o`)).values()].map(Number);
}

/**
 * Shared again: a fresh circuit (own credentials) opens after 3 failures IN TOTAL across both processes (gateway 2
 * once, gateway 1 twice; per process it would take gateway 1 a 3rd failure of its own), and gateway 2, which already
 * held the circuit as closed in its local view, stops calling the primary within ~1 s (its background refresh).
 */
async function expectSharedAgain(mode: string, stream: boolean, circuit: string): Promise<void> {
  const { gws } = stack();
  resetMocks();
  const [A, B] = pairOf(stream);
  A.setBehavior({ kind: 'error', status: 503 });
  const config = fallbackConfig(A, B, circuit);
  const via = gws.map((gw) => client(gw, config));
  const say = async (gw: number, text: string) => {
    const a = await ask(via[gw]!, stream, `${mode} ${text}`);
    expectOk(a, `${mode} ${text}`, 'config.targets[1]');
    note(`shared again (${circuit})`, a);
    expect(a.ms).toBeLessThan(FAST_MS);
  };
  const markersBefore = (await openMarkers()).length;
  await say(1, 'first');
  await say(0, 'second');
  await say(0, 'third');
  expect(A.requests).toHaveLength(3);
  // Opened through the store: one more open-until marker there, in the future.
  const markers = await openMarkers();
  expect(markers).toHaveLength(markersBefore + 1);
  await Bun.sleep(FAST_MS);
  for (let i = 0; i < 4; i++) await say(1, `open ${i}`);
  await say(0, 'open 4');
  expect(A.requests).toHaveLength(3);
  expect(B.requests).toHaveLength(8);
}

describe('Redis stopped and restarted under two gateway processes', () => {
  test('before: Redis up, both gateways connected and answering', async () => {
    const { redis, gws } = stack();
    expect(await redis.clientCount()).toBe(2);
    for (const [mode, stream] of MODES) {
      const [A, B] = pairOf(stream);
      const config = fallbackConfig(A, B, `before-${mode}`);
      for (const gw of gws) expectOk(await ask(client(gw, config), stream, `before ${mode}`), `before ${mode}`, 'config.targets[0]');
    }
  }, T);

  describe.each(MODES)('Redis killed (%s)', (mode, stream) => {
    test('every request through both gateways is answered 200 within ~1 s', async () => {
      const { redis, gws } = stack();
      if (redis.running()) {
        await redis.stop('SIGKILL');
        killedAt = Date.now();
      }
      resetMocks();
      const [A, B] = pairOf(stream);
      const config = fallbackConfig(A, B, `healthy-${mode}`);
      const via = gws.map((gw) => client(gw, config));
      for (let i = 0; i < 20; i++) {
        const a = await ask(via[i % 2]!, stream, `down ${mode} ${i}`);
        expectOk(a, `down ${mode} ${i}`, 'config.targets[0]');
        note('killed', a);
        expect(a.ms).toBeLessThan(FAST_MS);
      }
      // Also a burst, both processes at once.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(via[i % 2]!, stream, `burst ${mode} ${i}`)));
      burst.forEach((a, i) => {
        expectOk(a, `burst ${mode} ${i}`, 'config.targets[0]');
        note('killed', a);
        expect(a.ms).toBeLessThan(FAST_MS);
      });
      expect(A.requests).toHaveLength(40);
      expect(B.requests).toHaveLength(0);
    }, T);

    test('the breaker degrades to per-process decisions: each process trips its own circuit after its own 3 failures', async () => {
      const { redis, gws } = stack();
      expect(redis.running()).toBe(false);
      resetMocks();
      const [A, B] = pairOf(stream);
      A.setBehavior({ kind: 'error', status: 503 });
      const config = fallbackConfig(A, B, `outage-${mode}`);
      const via = gws.map((gw) => client(gw, config));
      const reachedA: number[] = [];
      for (let i = 0; i < 12; i++) {
        const a = await ask(via[i % 2]!, stream, `outage ${mode} ${i}`);
        expectOk(a, `outage ${mode} ${i}`, 'config.targets[1]');
        note('killed', a);
        expect(a.ms).toBeLessThan(FAST_MS);
        reachedA.push(A.requests.length);
      }
      // Requests 1..6 (gateway 1, 2, 1, 2, 1, 2) each reached A: 3 failures per process. Shared, the circuit would
      // have opened after the 3rd request overall. Then neither process calls A any more.
      expect(reachedA).toEqual([1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6]);
      expect(B.requests).toHaveLength(12);
      for (const gw of gws) expect(logLines(gw, 'state store unavailable').length).toBeGreaterThanOrEqual(1);
    }, T);
  });

  test('redis-server restarted on the same port: the gateways reconnect by themselves', async () => {
    const { redis } = stack();
    expect(await redis.command('ping').catch(() => 'down')).toBe('down');
    // Still serving while it stays down (ioredis keeps retrying in the background meanwhile).
    resetMocks();
    const [A, B] = pairOf(false);
    const via = stack().gws.map((gw) => client(gw, fallbackConfig(A, B, 'long-outage')));
    for (let i = 0; Date.now() - killedAt < OUTAGE_MS; i++) {
      const a = await ask(via[i % 2]!, i % 3 === 0, `still down ${i}`);
      expectOk(a, `still down ${i}`);
      note('killed', a);
      expect(a.ms).toBeLessThan(FAST_MS);
      await Bun.sleep(100);
    }
    await redis.restart();
    const ms = await waitFor('both gateways reconnected', async () => (await redis.clientCount()) === 2, 10_000);
    console.info(`[redis-outage] both gateways reconnected ${ms} ms after redis-server answered PING again`);
    // The circuits each process opened on its own during the outage (one per mode) are written to the empty store
    // by the background refresh once it answers again (one key per circuit, whichever process writes it: 2 markers in all).
    await waitFor('outage circuits written back to Redis', async () => (await openMarkers()).filter((u) => u > Date.now()).length === 2, 2_000);
    for (const gw of stack().gws) await waitFor('"reachable again" logged', () => logLines(gw, 'reachable again').length > 0, 2_000);
  }, T);

  describe.each(MODES)('after the restart (%s)', (mode, stream) => {
    test('circuits are shared again: 3 failures in total across both processes open it, and both see it within ~1 s', async () => {
      await expectSharedAgain(mode, stream, `after-${mode}`);
    }, T);
  });

  test('Redis frozen (SIGSTOP: connections open, no answers): still 200 within ~1 s, decided per process; shared again once it answers', async () => {
    const { redis, gws } = stack();
    resetMocks();
    const [A, B] = pairOf(false);
    const healthy = fallbackConfig(A, B, 'frozen-healthy');
    const failing = fallbackConfig(B, A, 'frozen-failing'); // B is its primary
    B.setBehavior({ kind: 'error', status: 503 });
    redis.freeze();
    try {
      for (const [mode, stream] of MODES) {
        for (let i = 0; i < 6; i++) {
          const gw = gws[i % 2]!;
          const ok = await ask(client(gw, healthy), stream, `frozen ${mode} ${i}`);
          expectOk(ok, `frozen ${mode} ${i}`, 'config.targets[0]');
          note('frozen', ok);
          expect(ok.ms).toBeLessThan(FROZEN_MS);
          const failedOver = await ask(client(gw, failing), stream, `frozen fo ${mode} ${i}`);
          expectOk(failedOver, `frozen fo ${mode} ${i}`, 'config.targets[1]');
          note('frozen', failedOver);
          expect(failedOver.ms).toBeLessThan(FROZEN_MS);
        }
      }
    } finally {
      redis.thaw();
    }
    // Every store call timed out: each process tripped its own circuit after its own 3 failures.
    expect(B.requests).toHaveLength(6);
    // Once Redis answers again (the commands that queued up on the open connections are answered and dropped),
    // circuits are shared again.
    expect(await redis.command('ping')).toBe('PONG');
    await Bun.sleep(REFRESH_MS * 4);
    await expectSharedAgain('thawed', false, 'thawed');
  }, T);
});
