import { col, defineTable, type Migration } from '@gateway/sdk';
import type { PolicyCondition, PolicyGroupBy } from '@gateway/policy-kit';

/** Rate-limit policies; an archived one is kept (status `archived`) and no longer enforced. */
export const rateLimitPolicies = defineTable(
  'rate_limit_policies',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** The workspace the policy belongs to; null: organisation-wide. */
    workspace_id: col.ref().nullable(),
    name: col.string(255),
    type: col.enum(['requests', 'tokens'] as const, 16),
    unit: col.enum(['rpm', 'rph', 'rpd', 'rpw'] as const, 8),
    value: col.int(),
    conditions: col.json<PolicyCondition[]>(),
    group_by: col.json<PolicyGroupBy[]>(),
    status: col.enum(['active', 'archived'] as const, 16),
    created_at: col.timestamp().default(Date.now),
    last_updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'status'] }, { columns: ['workspace_id'] }] },
);

export const rateLimitMigrations: Migration[] = [{ id: 'rate-limits/0001-policies', tables: [rateLimitPolicies] }];
