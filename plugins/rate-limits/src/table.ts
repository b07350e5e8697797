import { col, defineTable, type Migration } from '@gateway/sdk';
import type { LimitUnit, PolicyCondition, PolicyGroupBy } from '@gateway/policy-kit';

/** Rate-limit policies; an archived one is kept (status `archived`) and no longer enforced. */
export const rateLimitPolicies = defineTable(
  'rate_limit_policies',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** The workspace the policy belongs to; null: organisation-wide. */
    workspace_id: col.ref().nullable(),
    name: col.string(255),
    /** `tool_calls`: counts the MCP and A2A proxies' tool and agent calls (the tool-call phase), not model calls. */
    type: col.enum(['requests', 'tokens', 'tool_calls'] as const, 16),
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

/** One limit of an object's `rate_limits`, as given and shown. */
export interface RateLimitSetting {
  type: 'requests' | 'tokens';
  unit: LimitUnit;
  value: number;
}

/**
 * The `rate_limits` of API keys, virtual keys and integration workspace access: one row per object, its limits in
 * the order given (at most one per type and unit). Enforced with the policies, in the same single check.
 */
export const subjectRateLimits = defineTable(
  'subject_rate_limits',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** The key's workspace (null: an organisation key); the workspace given access, for an integration. */
    workspace_id: col.ref().nullable(),
    kind: col.enum(['api_key', 'virtual_key', 'integration_workspace'] as const, 32),
    /** admin-kit's limitSubjectKey: `<kind>:<id>`, `integration_workspace:<integration>:<workspace>`. */
    subject: col.string(255).unique(),
    /** The API key, virtual key or integration. */
    subject_id: col.ref(),
    limits: col.json<RateLimitSetting[]>(),
    created_at: col.timestamp().default(Date.now),
    last_updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['subject_id'] }] },
);

export const rateLimitMigrations: Migration[] = [
  { id: 'rate-limits/0001-policies', tables: [rateLimitPolicies] },
  { id: 'rate-limits/0002-subject-limits', tables: [subjectRateLimits] },
];
