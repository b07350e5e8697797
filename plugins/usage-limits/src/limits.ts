/**
 * What the policies' routes and the keys' `usage_limits` share: a limit's stored fields from checked settings (new,
 * or merged over the stored row), the alert epochs a raise bumps, and its view with the current usage.
 */
import { iso } from '@gateway/admin-kit';
import { limitsClock } from '@gateway/policy-kit';
import type { StateStore } from '@gateway/sdk';
import type { Groups } from './groups.ts';
import { type LimitSettings, type LimitType, mergedViolations } from './input.ts';
import { firstReset, type Period, periodAt, type ResetRule } from './period.ts';
import { counterKeyOf } from './stage.ts';
import { amountOf } from './store.ts';
import type { UsageLimitRow } from './table.ts';

/** The stored fields a limit's settings decide. */
export interface LimitFields {
  type: LimitType;
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'monthly' | 'weekly' | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: number | null;
  period_start: number;
  last_reset_at: number | null;
  alert_epoch: number;
  threshold_epoch: number;
}

/** The period a stored row is in now (its reset may have passed before the row was brought up to date). */
export function currentPeriod(row: Pick<UsageLimitRow, 'periodic_reset' | 'periodic_reset_days' | 'period_start' | 'next_usage_reset_at'>): Period {
  return periodAt(row, { start: row.period_start, end: row.next_usage_reset_at }, limitsClock.now());
}

/**
 * The fields of a limit after `settings` (absent ones kept from `before`; a new limit needs type and credit_limit,
 * checked by the caller's schema). Giving one of periodic_reset / periodic_reset_days clears the other; a new rule
 * without next_usage_reset_at starts at its first natural reset. Violations of the merged limit are pushed.
 */
export function fieldsOf(settings: LimitSettings, before: UsageLimitRow | undefined, path: string, violations: string[]): LimitFields {
  const now = limitsClock.now();
  const type = before?.type ?? settings.type ?? 'cost';
  const credit = settings.credit_limit ?? before?.credit_limit ?? 0;
  const threshold = settings.alert_threshold !== undefined ? settings.alert_threshold : (before?.alert_threshold ?? null);
  let rule: ResetRule = { periodic_reset: before?.periodic_reset ?? null, periodic_reset_days: before?.periodic_reset_days ?? null };
  if (settings.periodic_reset !== undefined) rule = { periodic_reset: settings.periodic_reset, periodic_reset_days: settings.periodic_reset_days ?? (settings.periodic_reset ? null : rule.periodic_reset_days) };
  else if (settings.periodic_reset_days !== undefined) rule = { periodic_reset: settings.periodic_reset_days ? null : rule.periodic_reset, periodic_reset_days: settings.periodic_reset_days };
  const ruleChanged = !before || rule.periodic_reset !== before.periodic_reset || rule.periodic_reset_days !== before.periodic_reset_days;
  // The stored period first brought up to date: the counters of the period in course are kept.
  const period = before ? currentPeriod(before) : { start: now, end: null };
  const lastReset = before ? (period.start !== before.period_start ? period.start : before.last_reset_at) : null;
  const next = settings.next_usage_reset_at !== undefined ? settings.next_usage_reset_at : ruleChanged ? firstReset(rule, now) : period.end;
  violations.push(...mergedViolations({ type, credit_limit: credit, alert_threshold: threshold }, path));
  const raised = before !== undefined && credit > before.credit_limit;
  const thresholdRaised =
    before !== undefined && before.alert_threshold !== null && (threshold === null || threshold > before.alert_threshold);
  return {
    type,
    credit_limit: credit,
    alert_threshold: threshold,
    ...rule,
    next_usage_reset_at: next,
    period_start: period.start,
    last_reset_at: lastReset,
    alert_epoch: (before?.alert_epoch ?? 0) + (raised ? 1 : 0),
    threshold_epoch: (before?.threshold_epoch ?? 0) + (thresholdRaised || raised ? 1 : 0),
  };
}

export interface GroupUsage {
  /** The group's values by group_by key; {} for a limit without group_by. */
  group: Record<string, string | null>;
  /** In the limit's unit: US dollars for cost, tokens. */
  usage: number;
}

/** At most this many groups are shown per policy (the oldest of the period first). */
export const GROUPS_SHOWN = 100;

/** The usage of each group of the limit's current period. */
export async function usageOf(row: UsageLimitRow, state: StateStore, groups: Groups): Promise<GroupUsage[]> {
  const period = currentPeriod(row);
  const found = row.group_by.length === 0 ? [{ group_key: '', group_values: {} }] : await groups.of(row.id, period.start, GROUPS_SHOWN);
  if (found.length === 0) return [];
  const values = await state.read(found.map((g) => counterKeyOf(row.id, period.start, g.group_key))).catch(() => found.map(() => Number.NaN));
  return found.map((g, i) => ({ group: g.group_values, usage: amountOf(row.type, values[i] ?? 0) }));
}

/** The settings part of a limit's view, its period as it is now. */
export function settingsView(row: UsageLimitRow) {
  const period = currentPeriod(row);
  return {
    type: row.type,
    credit_limit: row.credit_limit,
    alert_threshold: row.alert_threshold,
    periodic_reset: row.periodic_reset,
    periodic_reset_days: row.periodic_reset_days,
    next_usage_reset_at: iso(period.end),
    last_reset_at: iso(period.start !== row.period_start ? period.start : row.last_reset_at),
  };
}
