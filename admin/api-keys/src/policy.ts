/**
 * Rotation policies (SPEC.md "API keys"): `rotation_period` weekly or monthly on the API, stored as
 * `rotation_period_days` (7 or 30); `next_rotation_at`; `key_transition_period_ms` (at least 30 minutes). An
 * enforced period (organisation setting `user_api_key_rotation_period`) is given to workspace-user keys created
 * without a policy, and an explicit different period is refused at create and update.
 */
import type { RotationPeriod } from '@gateway/admin-kit';
import { Errors } from '@gateway/sdk';

export const DAY_MS = 86_400_000;
export const DAYS_OF: Readonly<Record<RotationPeriod, number>> = { weekly: 7, monthly: 30 };
/** SPEC.md Limits: `key_transition_period_ms` minimum 30 minutes. */
export const MIN_TRANSITION_MS = 1_800_000;
/** The transition of a rotation when neither the request nor the key's policy gives one. */
export const DEFAULT_TRANSITION_MS = 3_600_000;

export function periodOfDays(days: number | null): RotationPeriod | null {
  if (days === DAYS_OF.weekly) return 'weekly';
  if (days === DAYS_OF.monthly) return 'monthly';
  return null;
}

export interface RotationPolicyInput {
  rotation_period?: RotationPeriod;
  next_rotation_at?: string;
  key_transition_period_ms?: number;
}

export interface RotationPolicyView {
  rotation_period: RotationPeriod;
  next_rotation_at: string | null;
  key_transition_period_ms: number | null;
}

/** The policy columns of a key. */
export interface StoredPolicy {
  rotation_period_days: number | null;
  next_rotation_at: number | null;
  key_transition_period_ms: number | null;
}

export const NO_POLICY: StoredPolicy = { rotation_period_days: null, next_rotation_at: null, key_transition_period_ms: null };

// ISO 8601: a date (midnight UTC), or a date and time with `Z` or an offset; never a time in the server's zone.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** Milliseconds of an ISO 8601 instant strictly after `now`; 400 naming `param` otherwise. */
export function futureInstant(value: string, param: string, now: number): number {
  const ms = ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw Errors.badRequest(`${param} must be an ISO 8601 date-time with a time zone, e.g. 2030-01-31T12:00:00Z`, param);
  if (ms <= now) throw Errors.badRequest(`${param} must be in the future`, param);
  return ms;
}

export interface PolicyContext {
  now: number;
  /** The period the organisation or workspace enforces on this key (workspace-user keys only); null: none. */
  enforced: RotationPeriod | null;
  /** The key's policy before an update. */
  current?: StoredPolicy;
}

/**
 * The policy columns to store: from `input` (an object, null to remove, undefined when absent), the enforced
 * period and the key's current policy. Undefined: leave the policy as it is (an update without rotation_policy).
 */
export function resolvePolicy(input: RotationPolicyInput | null | undefined, ctx: PolicyContext): StoredPolicy | undefined {
  const { now, enforced, current } = ctx;
  if (input === undefined && current) return undefined;
  if (input === null || input === undefined) {
    if (!enforced) return NO_POLICY;
    if (current) throw Errors.badRequest(`rotation_policy cannot be removed: workspace-user keys here must rotate ${enforced}`, 'rotation_policy');
    return { rotation_period_days: DAYS_OF[enforced], next_rotation_at: now + DAYS_OF[enforced] * DAY_MS, key_transition_period_ms: DEFAULT_TRANSITION_MS };
  }
  if (enforced && input.rotation_period !== undefined && input.rotation_period !== enforced)
    throw Errors.badRequest(
      `rotation_policy.rotation_period must be ${enforced}: the rotation period of workspace-user keys is enforced here`,
      'rotation_policy.rotation_period',
    );
  const currentPeriod = current ? periodOfDays(current.rotation_period_days) : null;
  const period = input.rotation_period ?? enforced ?? currentPeriod;
  if (!period) throw Errors.badRequest('rotation_policy.rotation_period is required (weekly or monthly)', 'rotation_policy.rotation_period');
  const days = DAYS_OF[period];
  let next: number;
  if (input.next_rotation_at !== undefined) next = futureInstant(input.next_rotation_at, 'rotation_policy.next_rotation_at', now);
  else if (current?.rotation_period_days === days && current.next_rotation_at !== null && current.next_rotation_at > now) next = current.next_rotation_at;
  else next = now + days * DAY_MS;
  return {
    rotation_period_days: days,
    next_rotation_at: next,
    key_transition_period_ms: input.key_transition_period_ms ?? current?.key_transition_period_ms ?? DEFAULT_TRANSITION_MS,
  };
}
