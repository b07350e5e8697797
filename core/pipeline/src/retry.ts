import { ROUTING_LIMITS, type TargetConfig } from '@gateway/sdk';

export const DEFAULT_RETRY_STATUS = [429, 500, 502, 503, 504];
/** The longest a provider's Retry-After is honoured; beyond it the attempt is not retried. */
export const RETRY_AFTER_CAP_MS = 60_000;

export function retryPolicy(target: TargetConfig): { attempts: number; codes: readonly number[]; useRetryAfter: boolean } {
  const retry = target.retry;
  if (!retry) return { attempts: 0, codes: DEFAULT_RETRY_STATUS, useRetryAfter: false };
  return {
    // Bounded even for a config that was never validated (one saved before the limit existed).
    attempts: Math.min(ROUTING_LIMITS.maxRetryAttempts, Math.max(0, Math.floor(retry.attempts))),
    codes: retry.on_status_codes ?? DEFAULT_RETRY_STATUS,
    useRetryAfter: retry.use_retry_after_headers === true,
  };
}

/** Exponential backoff with full jitter: 100 ms, 200 ms, 400 ms … capped at 5 s, times a random factor. */
export function backoffMs(retry: number, random = Math.random): number {
  const ceiling = Math.min(5_000, 100 * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
