/**
 * Periods of a usage limit (docs/admin/policies.md, "Periodic reset"). A limit counts from `period_start` until
 * `next_usage_reset_at`; at that instant a new period starts (its counters are new: the period's start is in their
 * key) and the next reset is one period later: `weekly` 7 days, `periodic_reset_days` N days, `monthly` the same day
 * of the next month (its last day when shorter), all at midnight UTC. Without a periodic reset, a given
 * `next_usage_reset_at` resets once; without either, the limit never resets.
 *
 * Every process computes the same period from the same row and clock, with no I/O: the stage rolls a limit over in
 * memory as soon as the clock passes its reset, and the row is brought up to date in the background (resets.ts).
 */

const DAY = 86_400_000;

export interface ResetRule {
  readonly periodic_reset: 'monthly' | 'weekly' | null;
  readonly periodic_reset_days: number | null;
}

export interface Period {
  readonly start: number;
  /** The next reset; null: none to come. */
  readonly end: number | null;
}

export const midnightOf = (ms: number): number => ms - (((ms % DAY) + DAY) % DAY);

/** The reset one period after `at`, or null when the rule has no period. */
export function advance(rule: ResetRule, at: number): number | null {
  if (rule.periodic_reset_days) return at + rule.periodic_reset_days * DAY;
  if (rule.periodic_reset === 'weekly') return at + 7 * DAY;
  if (rule.periodic_reset === 'monthly') {
    const d = new Date(at);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth() + 1;
    const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    return Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay));
  }
  return null;
}

/**
 * The first reset of a new rule when none is given: the next midnight UTC that starts a period (`monthly`: the 1st of
 * next month; `weekly`: next Monday; N days: N days after today's midnight); null without a periodic reset.
 */
export function firstReset(rule: ResetRule, now: number): number | null {
  const today = midnightOf(now);
  if (rule.periodic_reset_days) return today + rule.periodic_reset_days * DAY;
  if (rule.periodic_reset === 'weekly') {
    const day = Math.floor(now / DAY);
    return (day - ((day + 3) % 7) + 7) * DAY; // 1970-01-01 was a Thursday
  }
  if (rule.periodic_reset === 'monthly') {
    const d = new Date(now);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  return null;
}

/** The period that holds `now`, rolled over from the stored one as many times as the clock has passed a reset. */
export function periodAt(rule: ResetRule, stored: Period, now: number): Period {
  let { start, end } = stored;
  // Bounded: one step per missed period (a daily limit left alone for years rolls a few hundred times, once).
  for (let steps = 0; end !== null && now >= end && steps < 100_000; steps++) {
    start = end;
    end = advance(rule, end);
  }
  return { start, end };
}
