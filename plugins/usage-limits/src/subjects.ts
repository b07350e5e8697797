/**
 * The `usage_limits` field of API keys, virtual keys and integration workspace access (service `usageLimits`): the
 * owning routes prepare the body's value before they write (every violation in their 400), save it after, and merge
 * the views into their answers. A limit is one row of usage_limits (kind and subject), enforced and reset like a
 * policy without conditions or group_by.
 */
import { limitSubjectKey, type PreparedLimits, type SubjectUsageLimits, type UsageLimitsView } from '@gateway/admin-kit';
import { type Database, eq, inArray, type StateStore } from '@gateway/sdk';
import type { Groups } from './groups.ts';
import { readSubjectLimits, refuse } from './input.ts';
import { fieldsOf, type LimitFields, settingsView, usageOf } from './limits.ts';
import type { LimitStore } from './store.ts';
import { type UsageLimitRow, usageLimits } from './table.ts';

interface Prepared extends PreparedLimits {
  readonly before: UsageLimitRow | undefined;
  readonly fields: LimitFields | undefined;
}

export interface SubjectDeps {
  database: Database;
  store: LimitStore;
  state: StateStore;
  groups: Groups;
}

export function createSubjectLimits({ database, store, state, groups }: SubjectDeps): SubjectUsageLimits {
  const rowsOf = async (keys: readonly string[]) =>
    keys.length === 0 ? [] : database.select(usageLimits, { where: (c) => inArray(c.subject, [...keys]), fresh: true });

  return {
    async prepare(subject, value, path) {
      const key = limitSubjectKey(subject);
      const [before] = await rowsOf([key]);
      const violations: string[] = [];
      const settings = readSubjectLimits(value, path, Date.now(), violations);
      // A new limit needs its credit limit; its type defaults to cost.
      if (settings && !before && settings.credit_limit === undefined) violations.push(`${path}.credit_limit: is required`);
      if (settings && before && settings.type !== undefined && settings.type !== before.type)
        violations.push(`${path}.type: cannot change (${before.type}); remove the limit (null) and set a new one`);
      const fields = settings && violations.length === 0 ? fieldsOf(settings, before, path, violations) : undefined;
      if (violations.length) refuse(violations);
      const prepared: Prepared = { subject, removes: settings === null, before, fields };
      return prepared;
    },

    async save(list) {
      if (list.length === 0) return;
      const now = Date.now();
      for (const p of list as readonly Prepared[]) {
        const { subject } = p;
        const key = limitSubjectKey(subject);
        if (p.removes) {
          if (p.before) await database.delete(usageLimits, (c) => eq(c.id, p.before!.id));
          continue;
        }
        if (!p.fields) continue;
        if (p.before) {
          await database.update(usageLimits, { ...p.fields, name: subject.name, last_updated_at: now }, (c) => eq(c.id, p.before!.id));
          continue;
        }
        await database.insert(usageLimits, {
          organisation_id: subject.organisationId,
          workspace_id: subject.workspaceId,
          kind: subject.kind,
          subject: key,
          subject_id: subject.id,
          name: subject.name,
          ...p.fields,
          conditions: [],
          group_by: [],
          status: 'active',
          created_at: now,
          last_updated_at: now,
        });
      }
      await store.changed();
    },

    async views(subjects) {
      const rows = await rowsOf(subjects.map(limitSubjectKey));
      const out = new Map<string, UsageLimitsView>();
      await Promise.all(
        rows.map(async (row) => {
          const [usage] = await usageOf(row, state, groups);
          out.set(row.subject, { ...settingsView(row), current_usage: usage ? (Number.isNaN(usage.usage) ? null : usage.usage) : 0 });
        }),
      );
      return out;
    },

    async remove(subjects) {
      const keys = subjects.map(limitSubjectKey);
      if (keys.length === 0) return;
      const removed = await database.delete(usageLimits, (c) => inArray(c.subject, keys));
      if (removed) await store.changed();
    },
  };
}
