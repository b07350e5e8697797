import { describe, expect, test } from 'bun:test';
import { backoffMs, DEFAULT_RETRY_STATUS, RETRY_AFTER_CAP_MS, retryPolicy, sleep } from './retry.ts';

describe('retryPolicy', () => {
  test('no retry config: no retries, the default codes', () => {
    expect(retryPolicy({})).toEqual({ attempts: 0, codes: DEFAULT_RETRY_STATUS, useRetryAfter: false });
    expect(DEFAULT_RETRY_STATUS).toEqual([429, 500, 502, 503, 504]);
  });

  test('attempts, codes and the Retry-After flag from the config', () => {
    expect(retryPolicy({ retry: { attempts: 3, on_status_codes: [408], use_retry_after_headers: true } })).toEqual({
      attempts: 3,
      codes: [408],
      useRetryAfter: true,
    });
    expect(retryPolicy({ retry: { attempts: 2 } }).codes).toBe(DEFAULT_RETRY_STATUS);
  });

  test('attempts are a whole number, never negative', () => {
    expect(retryPolicy({ retry: { attempts: 2.9 } }).attempts).toBe(2);
    expect(retryPolicy({ retry: { attempts: -4 } }).attempts).toBe(0);
  });
});

describe('backoffMs', () => {
  test('stays within [ceiling/2, ceiling] where the ceiling doubles from 100 ms', () => {
    for (let retry = 0; retry < 6; retry++) {
      const ceiling = 100 * 2 ** retry;
      expect(backoffMs(retry, () => 0)).toBe(ceiling / 2);
      expect(backoffMs(retry, () => 0.999999)).toBe(ceiling);
      for (let i = 0; i < 200; i++) {
        const ms = backoffMs(retry);
        expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
        expect(ms).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  test('is capped at 5 s however many retries were made', () => {
    for (const retry of [6, 7, 10, 50, 1000]) {
      expect(backoffMs(retry, () => 0)).toBe(2500);
      expect(backoffMs(retry, () => 0.999999)).toBe(5000);
    }
  });

  test('the Retry-After cap is one minute', () => {
    expect(RETRY_AFTER_CAP_MS).toBe(60_000);
  });
});

describe('sleep', () => {
  test('waits about the given time', async () => {
    const started = performance.now();
    await sleep(30, new AbortController().signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  test('ends early when the signal aborts, and at once when it already has', async () => {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 10);
    await sleep(10_000, controller.signal);
    expect(performance.now() - started).toBeLessThan(5_000); // not the 10 s asked
    const t2 = performance.now();
    await sleep(10_000, controller.signal);
    expect(performance.now() - t2).toBeLessThan(5_000);
  });
});
