/**
 * Fixed windows aligned in UTC: a minute, an hour, a day (from midnight UTC), an ISO week (from Monday 00:00 UTC).
 * Fixed rather than sliding: one counter per window, checked and consumed in one atomic step (exact across
 * processes), a reset time every client can be told (`x-ratelimit-reset-*`, `retry-after`), and memory that does not
 * grow with the limit. The price is the edge: up to twice the value can pass around a window's boundary.
 */

export type LimitUnit = 'rpm' | 'rph' | 'rpd' | 'rpw';
export const LIMIT_UNITS: readonly LimitUnit[] = ['rpm', 'rph', 'rpd', 'rpw'];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export const UNIT_MS: Readonly<Record<LimitUnit, number>> = { rpm: MINUTE, rph: HOUR, rpd: DAY, rpw: WEEK };

export interface LimitWindow {
  /** Epoch ms of the window's first instant. */
  readonly start: number;
  /** Epoch ms of the next window's first instant. */
  readonly end: number;
}

/** The window of `unit` that holds `now`. */
export function windowOf(unit: LimitUnit, now: number): LimitWindow {
  if (unit !== 'rpw') {
    const length = UNIT_MS[unit];
    const start = now - (now % length);
    return { start, end: start + length };
  }
  // 1970-01-01 was a Thursday: Monday is 3 days before a day whose (days + 3) % 7 is 0.
  const day = Math.floor(now / DAY);
  const start = (day - ((day + 3) % 7)) * DAY;
  return { start, end: start + WEEK };
}

/**
 * The clock of the limits: wall time, replaceable in tests (one gateway in the test's process) to move across
 * windows without waiting.
 */
export const limitsClock = { now: (): number => Date.now() };

/** A counter's key: its kind (`rl`, `ul`), policy, window and group; the window in the key makes each window new. */
export function counterKey(kind: string, policyId: string, windowStart: number, group: string): string {
  return `${kind}:${policyId}:${windowStart}:${group}`;
}
