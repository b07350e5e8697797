// Loadbalance through TWO real gateway processes sharing circuit state through Redis (a redis-server of this file's
// own, same CIRCUIT_BREAKER_KEY_PREFIX): weights 1:1 over 200 requests, half through each process, with the official
// OpenAI SDK (`maxRetries: 0`), streamed and not. A sanity check that the breaker wired into planning (cb_config on,
// every circuit closed) leaves the weighted pick alone: each mock gets its share within ±15 points, each process
// spreads its own requests over both, and the answering target (`x-gateway-last-used-option-index`) is the mock
// that received the call.

import { describe, expect, test } from 'bun:test';
import { type Answer, ask, client, leaf, MODES } from './support.ts';
import { MIN_COOLDOWN_MS, useTwoGateways } from './redis-support.ts';

const TOTAL = 200;
const IN_FLIGHT = 10;
const stack = useTwoGateways(2);

describe.each(MODES)('loadbalance 1:1 across two gateway processes (%s)', (mode, stream) => {
  test(`${TOTAL} requests: both mocks within ±15 points of 50 %`, async () => {
    const { gws, mocks } = stack();
    const [A, B] = [mocks[0]!, mocks[1]!];
    A.reset();
    B.reset();
    const config = {
      strategy: { mode: 'loadbalance' },
      cb_config: { failure_threshold: 3, cooldown_interval: MIN_COOLDOWN_MS },
      targets: [leaf(A, { weight: 1 }), leaf(B, { weight: 1 })],
    };
    const via = gws.map((gw) => client(gw, config));
    const answers: { gw: number; a: Answer; text: string }[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < TOTAL; i = next++) {
        const text = `${mode} lb ${i}`;
        answers.push({ gw: i % 2, a: await ask(via[i % 2]!, stream, text), text });
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));

    expect(answers).toHaveLength(TOTAL);
    const picks: Record<string, number>[] = [{}, {}];
    for (const { gw, a, text } of answers) {
      expect(a.error).toBeUndefined();
      expect(a.status).toBe(200);
      expect(a.text).toBe(`You said: ${text}`);
      const index = a.headers.get('x-gateway-last-used-option-index') ?? 'none';
      picks[gw]![index] = (picks[gw]![index] ?? 0) + 1;
    }
    // Exactly one call per request, to the target the header names.
    const toA = (picks[0]!['config.targets[0]'] ?? 0) + (picks[1]!['config.targets[0]'] ?? 0);
    const toB = (picks[0]!['config.targets[1]'] ?? 0) + (picks[1]!['config.targets[1]'] ?? 0);
    expect(toA + toB).toBe(TOTAL);
    expect(A.requests).toHaveLength(toA);
    expect(B.requests).toHaveLength(toB);
    console.info(`[circuit-loadbalance] ${mode}: A ${toA}, B ${toB}; per process ${JSON.stringify(picks)}`);

    const shareA = (100 * toA) / TOTAL;
    expect(shareA).toBeGreaterThanOrEqual(35);
    expect(shareA).toBeLessThanOrEqual(65);
    // Each process (100 requests) uses both targets (a loose bound: ≥ 25 % is 5 standard deviations below 50 %).
    for (const p of picks) {
      expect(p['config.targets[0]'] ?? 0).toBeGreaterThanOrEqual(25);
      expect(p['config.targets[1]'] ?? 0).toBeGreaterThanOrEqual(25);
    }
  }, 30_000);
});
