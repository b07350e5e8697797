// The circuit breaker shared by TWO real gateway processes through Redis (a redis-server of this file's own; both
// processes use the same CIRCUIT_BREAKER_KEY_PREFIX), with the official OpenAI SDK as the client (`maxRetries: 0`).
//
// A primary that is down for a while and then recovers, behind
//   {"strategy":{"mode":"fallback"},"cb_config":{"failure_threshold":3,"cooldown_interval":30000},"targets":[A, B]}
// - closed: requests sent alternately through gateway 1 and gateway 2 each try A (503) and are answered by B;
// - after 3 failures IN TOTAL (2 seen by one process, 1 by the other) the circuit is open for BOTH processes: A gets
//   no more calls from either, every answer comes from B (`x-gateway-last-used-option-index: config.targets[1]`);
// - it stays open for the whole cooldown (30 s, the schema minimum, so this file takes ~32 s);
// - A recovers; after the cooldown ONE probe (across both processes, even with requests arriving at both at once)
//   reaches A and succeeds, and traffic returns to A for both processes.
// Streamed and non-streamed runs go side by side (test.concurrent), each on its own pair of mocks and so its own
// circuit, so that the cooldown is waited for once.

import { describe, expect, test } from 'bun:test';
import type { OpenAIMock } from '../mocks/openai-server.ts';
import { type Answer, ask, client, leaf, MODES } from './support.ts';
import { MIN_COOLDOWN_MS, REFRESH_MS, useTwoGateways } from './redis-support.ts';

const COOLDOWN = MIN_COOLDOWN_MS;
const stack = useTwoGateways(4);

/** Time for the other process's background refresh to pick up a change written to Redis (README: ~250 ms). */
const PROPAGATION_MS = REFRESH_MS * 2 + 100;

function fallbackConfig(a: OpenAIMock, b: OpenAIMock) {
  return {
    strategy: { mode: 'fallback' },
    cb_config: { failure_threshold: 3, cooldown_interval: COOLDOWN },
    targets: [leaf(a), leaf(b)],
  };
}

function expectFrom(a: Answer, text: string, index: 'config.targets[0]' | 'config.targets[1]'): void {
  expect(a.error).toBeUndefined();
  expect(a.status).toBe(200);
  expect(a.text).toBe(`You said: ${text}`);
  expect(a.headers.get('x-gateway-last-used-option-index')).toBe(index);
}

describe('primary down then recovered: one circuit for two gateway processes', () => {
  test.concurrent.each(MODES)(
    '%s: opens for both after 3 failures in total, stays open for the cooldown, one probe, closed again for both',
    async (mode, stream) => {
      const { gws, mocks } = stack();
      const [A, B] = stream ? [mocks[2]!, mocks[3]!] : [mocks[0]!, mocks[1]!];
      const config = fallbackConfig(A, B);
      const via = [client(gws[0], config), client(gws[1], config)] as const;
      const say = (gw: 0 | 1, text: string) => ask(via[gw], stream, `${mode} ${text}`);
      const expectB = (a: Answer, text: string) => expectFrom(a, `${mode} ${text}`, 'config.targets[1]');
      const expectA = (a: Answer, text: string) => expectFrom(a, `${mode} ${text}`, 'config.targets[0]');

      // ---- closed: A answers 503 every time; each request tries A once, then B answers.
      A.setBehavior({ kind: 'error', status: 503 });
      expectB(await say(0, 'closed 1'), 'closed 1');
      expect(A.requests).toHaveLength(1);
      expectB(await say(1, 'closed 2'), 'closed 2');
      expect(A.requests).toHaveLength(2); // 2 failures: still closed (gateway 2 counted on gateway 1's first)
      expectB(await say(0, 'closed 3'), 'closed 3');
      expect(A.requests).toHaveLength(3); // the 3rd failure in total (only the 2nd seen by gateway 1) opens it
      const openedAt = Date.now();
      expect(B.requests).toHaveLength(3);

      // ---- open for both processes: gateway 2 learns it from Redis (background refresh); A gets nothing more.
      await Bun.sleep(PROPAGATION_MS);
      for (let i = 0; i < 6; i++) {
        const gw = ((i + 1) % 2) as 0 | 1; // gateway 2 first: it did not see the failure that opened the circuit
        const a = await say(gw, `open ${i}`);
        expectB(a, `open ${i}`);
        expect(a.ms).toBeLessThan(1_000); // A is skipped, not called and failed over
      }
      expect(A.requests).toHaveLength(3);
      expect(B.requests).toHaveLength(9);

      // ---- A recovers (slowly: the probe stays in flight while the others arrive). Still open during the cooldown.
      A.setBehavior({ kind: 'default', delayMs: 500 });
      await Bun.sleep(openedAt + COOLDOWN - 1_500 - Date.now());
      expectB(await say(0, 'late 1'), 'late 1');
      expectB(await say(1, 'late 2'), 'late 2');
      expect(A.requests).toHaveLength(3);

      // ---- half-open: 3 requests at each process at once; exactly ONE probe reaches A and is answered by A.
      await Bun.sleep(openedAt + COOLDOWN + 200 - Date.now());
      const burst = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => say((i % 2) as 0 | 1, `half-open ${i}`)));
      expect(A.requests).toHaveLength(4);
      const byA = burst.filter((a) => a.headers.get('x-gateway-last-used-option-index') === 'config.targets[0]');
      expect(byA).toHaveLength(1);
      burst.forEach((a, i) => expectFrom(a, `${mode} half-open ${i}`, a === byA[0] ? 'config.targets[0]' : 'config.targets[1]'));
      expect(byA[0]!.ms).toBeGreaterThanOrEqual(450); // it really waited for the (slow) recovered A

      // ---- closed again, for both processes: every request goes to A, none to B.
      A.setBehavior(null);
      await Bun.sleep(PROPAGATION_MS);
      const bBefore = B.requests.length;
      for (let i = 0; i < 6; i++) expectA(await say((i % 2) as 0 | 1, `recovered ${i}`), `recovered ${i}`);
      expect(A.requests).toHaveLength(10);
      expect(B.requests).toHaveLength(bBefore);
    },
    COOLDOWN + 20_000,
  );
});
