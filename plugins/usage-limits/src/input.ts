/**
 * A usage limit's settings as a body gives them (a policy's, or the `usage_limits` of a key, a virtual key, an
 * integration's workspace), checked with every violation named as `path: reason`, and merged over stored ones.
 */
import { invalidBody } from '@gateway/admin-kit';
import { midnightOf } from './period.ts';

export const LIMIT_TYPES = ['cost', 'tokens'] as const;
export type LimitType = (typeof LIMIT_TYPES)[number];
export const RESETS = ['monthly', 'weekly'] as const;

/** Settings after checking; a field absent from the body is absent here (an update keeps the stored value). */
export interface LimitSettings {
  type?: LimitType;
  credit_limit?: number;
  alert_threshold?: number | null;
  periodic_reset?: 'monthly' | 'weekly' | null;
  periodic_reset_days?: number | null;
  /** Epoch ms at midnight UTC, or null. */
  next_usage_reset_at?: number | null;
}

export const SETTING_KEYS = ['type', 'credit_limit', 'alert_threshold', 'periodic_reset', 'periodic_reset_days', 'next_usage_reset_at'] as const;

const MAX_AMOUNT = 1e12;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the settings among `body`'s fields (others are the caller's to check), pushing violations prefixed by
 * `path`. `now` is for next_usage_reset_at, which must be a day to come once normalised to its midnight UTC.
 */
export function readSettings(body: Record<string, unknown>, path: string, now: number, violations: string[]): LimitSettings {
  const out: LimitSettings = {};
  const at = (key: string) => (path ? `${path}.${key}` : key);
  const amount = (key: 'credit_limit' | 'alert_threshold', nullable: boolean) => {
    const v = body[key];
    if (v === undefined) return;
    if (v === null && nullable) out[key] = null as never;
    else if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > MAX_AMOUNT) violations.push(`${at(key)}: must be a number above 0 and at most ${MAX_AMOUNT}${nullable ? ', or null' : ''}`);
    else out[key] = v;
  };
  if (body.type !== undefined) {
    if (!LIMIT_TYPES.includes(body.type as LimitType)) violations.push(`${at('type')}: must be one of ${LIMIT_TYPES.join(', ')}`);
    else out.type = body.type as LimitType;
  }
  amount('credit_limit', false);
  amount('alert_threshold', true);
  if (body.periodic_reset !== undefined) {
    if (body.periodic_reset !== null && !RESETS.includes(body.periodic_reset as 'monthly')) violations.push(`${at('periodic_reset')}: must be one of ${RESETS.join(', ')}, or null`);
    else out.periodic_reset = body.periodic_reset as 'monthly' | 'weekly' | null;
  }
  if (body.periodic_reset_days !== undefined) {
    const d = body.periodic_reset_days;
    if (d !== null && (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > 365)) violations.push(`${at('periodic_reset_days')}: must be an integer from 1 to 365, or null`);
    else out.periodic_reset_days = d as number | null;
  }
  if (body.periodic_reset != null && body.periodic_reset_days != null)
    violations.push(`${at('periodic_reset_days')}: periodic_reset and periodic_reset_days are mutually exclusive; give one`);
  if (body.next_usage_reset_at !== undefined) {
    const v = body.next_usage_reset_at;
    const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
    if (v === null) out.next_usage_reset_at = null;
    else if (!Number.isFinite(ms)) violations.push(`${at('next_usage_reset_at')}: must be an ISO 8601 date-time, or null`);
    else if (midnightOf(ms) <= now) violations.push(`${at('next_usage_reset_at')}: must be a day to come (it is normalised to midnight UTC)`);
    else out.next_usage_reset_at = midnightOf(ms);
  }
  return out;
}

/** Whole-limit rules once merged with what is stored: tokens are whole, a threshold is below the limit. */
export function mergedViolations(merged: { type: LimitType; credit_limit: number; alert_threshold: number | null }, path: string): string[] {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  const out: string[] = [];
  if (merged.type === 'tokens' && !Number.isInteger(merged.credit_limit)) out.push(`${at('credit_limit')}: a tokens limit is a whole number of tokens`);
  if (merged.alert_threshold !== null && merged.alert_threshold >= merged.credit_limit) out.push(`${at('alert_threshold')}: must be below credit_limit`);
  return out;
}

/** 400 listing every violation, the first one's field as `param`. */
export function refuse(violations: readonly string[]): never {
  throw invalidBody(violations);
}

/** A `usage_limits` value of a key, a virtual key or a workspace access: an object of settings, or null to remove. */
export function readSubjectLimits(value: unknown, path: string, now: number, violations: string[]): LimitSettings | null {
  if (value === null) return null;
  if (!isObject(value)) {
    violations.push(`${path}: must be an object ({credit_limit, alert_threshold, periodic_reset, …}) or null`);
    return null;
  }
  for (const key of Object.keys(value))
    if (!(SETTING_KEYS as readonly string[]).includes(key)) violations.push(`${path}.${key}: unknown property (allowed: ${SETTING_KEYS.join(', ')})`);
  return readSettings(value, path, now, violations);
}
