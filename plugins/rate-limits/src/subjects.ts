/**
 * The `rate_limits` field of API keys, virtual keys and integration workspace access (service `rateLimits`): the
 * owning routes prepare the body's value before they write (every violation in their 400), save it after, and merge
 * the views into their answers. A value replaces the object's limits; null (or []) removes them.
 */
import { invalidBody, limitSubjectKey, type PreparedLimits, type RateLimitView, type SubjectRateLimits } from '@gateway/admin-kit';
import { LIMIT_UNITS, type LimitUnit } from '@gateway/policy-kit';
import { type Database, eq, inArray } from '@gateway/sdk';
import type { PolicyStore } from './store.ts';
import { MAX_VALUE, SUBJECT_TYPES as TYPES } from './routes.ts';
import { type RateLimitSetting, subjectRateLimits } from './table.ts';

interface Prepared extends PreparedLimits {
  readonly limits: readonly RateLimitSetting[];
}

/** At most this many limits on one object (one per type and unit is 8). */
const MAX_LIMITS = 8;
const KEYS = ['type', 'unit', 'value'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The limits `value` gives (null and [] remove), every violation pushed as `path: reason`. */
export function readRateLimits(value: unknown, path: string, violations: string[]): RateLimitSetting[] {
  if (value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_LIMITS) {
    violations.push(`${path}: must be a list of at most ${MAX_LIMITS} limits ([{type, unit, value}]) or null`);
    return [];
  }
  const out: RateLimitSetting[] = [];
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(item)) return void violations.push(`${at}: must be an object {type, unit, value}`);
    for (const key of Object.keys(item)) if (!KEYS.includes(key)) violations.push(`${at}.${key}: unknown property (allowed: ${KEYS.join(', ')})`);
    const { type, unit, value: v } = item;
    const before = violations.length;
    if (!TYPES.includes(type as RateLimitSetting['type'])) violations.push(`${at}.type: must be one of ${TYPES.join(', ')}`);
    if (!LIMIT_UNITS.includes(unit as LimitUnit)) violations.push(`${at}.unit: must be one of ${LIMIT_UNITS.join(', ')}`);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_VALUE) violations.push(`${at}.value: must be an integer from 1 to ${MAX_VALUE}`);
    if (violations.length > before) return;
    if (seen.has(`${type}.${unit}`)) return void violations.push(`${at}: a second ${type} limit per ${unit}; give one per type and unit`);
    seen.add(`${type}.${unit}`);
    out.push({ type: type as RateLimitSetting['type'], unit: unit as LimitUnit, value: v as number });
  });
  return out;
}

export function createSubjectRateLimits(database: Database, store: PolicyStore): SubjectRateLimits {
  const rowsOf = async (keys: readonly string[]) =>
    keys.length === 0 ? [] : database.select(subjectRateLimits, { where: (c) => inArray(c.subject, [...keys]), fresh: true });

  return {
    async prepare(subject, value, path) {
      const violations: string[] = [];
      const limits = readRateLimits(value, path, violations);
      if (violations.length) throw invalidBody(violations);
      const prepared: Prepared = { subject, removes: limits.length === 0, limits };
      return prepared;
    },

    async save(list) {
      if (list.length === 0) return;
      const now = Date.now();
      for (const p of list as readonly Prepared[]) {
        const { subject } = p;
        const key = limitSubjectKey(subject);
        if (p.removes) {
          await database.delete(subjectRateLimits, (c) => eq(c.subject, key));
          continue;
        }
        const limits = [...p.limits];
        const [before] = await rowsOf([key]);
        if (before) {
          await database.update(subjectRateLimits, { limits, last_updated_at: now }, (c) => eq(c.id, before.id));
          continue;
        }
        await database.insert(subjectRateLimits, {
          organisation_id: subject.organisationId,
          workspace_id: subject.workspaceId,
          kind: subject.kind,
          subject: key,
          subject_id: subject.id,
          limits,
          created_at: now,
          last_updated_at: now,
        });
      }
      await store.changed();
    },

    async views(subjects) {
      const rows = await rowsOf(subjects.map(limitSubjectKey));
      return new Map(rows.map((row) => [row.subject, row.limits.map((l): RateLimitView => ({ type: l.type, unit: l.unit, value: l.value }))]));
    },

    async remove(subjects) {
      const keys = subjects.map(limitSubjectKey);
      if (keys.length === 0) return;
      const removed = await database.delete(subjectRateLimits, (c) => inArray(c.subject, keys));
      if (removed) await store.changed();
    },
  };
}
