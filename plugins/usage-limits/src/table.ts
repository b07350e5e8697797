import type { PolicyCondition, PolicyGroupBy } from '@gateway/policy-kit';
import { col, defineTable, type Migration, type Row } from '@gateway/sdk';

/** What a usage limit belongs to: a policy of its own, or an API key, a virtual key, an integration's workspace. */
export const SUBJECT_KINDS = ['policy', 'api_key', 'virtual_key', 'integration_workspace'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/**
 * Usage limits, the policies and those set on a key, a virtual key or an integration's workspace access, in one table
 * so that one index, one enforcement, one reset and one alert path serve them all. Amounts are in the limit's unit:
 * US dollars for `cost`, tokens for `tokens`. The counters themselves live in the state store (Redis when set).
 */
export const usageLimits = defineTable(
  'usage_limits',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** A policy's own workspace (null: organisation-wide); the workspace of a subject. */
    workspace_id: col.ref().nullable(),
    kind: col.enum(SUBJECT_KINDS, 32),
    /** `<kind>:<id>` (an integration's workspace: `integration_workspace:<integration>:<workspace>`); a policy: its id. */
    subject: col.string(255).unique(),
    /** The API key, virtual key or integration the limit is set on; null for a policy. */
    subject_id: col.ref().nullable(),
    name: col.string(255),
    type: col.enum(['cost', 'tokens'] as const, 16),
    credit_limit: col.double(),
    alert_threshold: col.double().nullable(),
    periodic_reset: col.enum(['monthly', 'weekly'] as const, 16).nullable(),
    periodic_reset_days: col.int().nullable(),
    /** The next reset (midnight UTC); null: none to come. */
    next_usage_reset_at: col.timestamp().nullable(),
    /** The start of the current period: the counters' key holds it, so a reset starts new counters. */
    period_start: col.timestamp(),
    last_reset_at: col.timestamp().nullable(),
    /** Bumped when the credit limit is raised: threshold and exhausted alerts may go out again. */
    alert_epoch: col.int().default(0),
    /** Bumped when the alert threshold is raised or removed: the threshold alert may go out again. */
    threshold_epoch: col.int().default(0),
    conditions: col.json<PolicyCondition[]>(),
    group_by: col.json<PolicyGroupBy[]>(),
    status: col.enum(['active', 'archived'] as const, 16),
    created_at: col.timestamp().default(Date.now),
    last_updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'kind', 'status'] }, { columns: ['subject_id'] }] },
);

export type UsageLimitRow = Row<typeof usageLimits>;

/**
 * The groups a policy's counters have seen in a period, so GET and LIST can show the usage of each (the counters
 * cannot be listed from the state store). Written once per group, period and process, after a call completes.
 */
export const usageLimitGroups = defineTable(
  'usage_limit_groups',
  {
    id: col.id(),
    limit_id: col.ref(),
    period_start: col.timestamp(),
    /** SHA-256 of the group's counter part, for the unique index (a group may be long). */
    group_hash: col.string(64),
    /** The counter part itself (policy-kit's encoding) and the values it stands for, by group_by key. */
    group_key: col.text(),
    group_values: col.json<Record<string, string | null>>(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['limit_id', 'period_start', 'group_hash'], unique: true }] },
);

export type UsageLimitGroupRow = Row<typeof usageLimitGroups>;

export const usageLimitMigrations: Migration[] = [{ id: 'usage-limits/0001-usage-limits', tables: [usageLimits, usageLimitGroups] }];
