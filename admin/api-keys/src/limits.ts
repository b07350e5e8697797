/** A key's `usage_limits` and `rate_limits` (docs/admin/api-keys.md), through admin-kit's helpers for their services. */
import { type LimitFields, type LimitServices, type PreparedFields, prepareLimits, withLimits } from '@gateway/admin-kit';
import type { ApiKeyRow } from './tables.ts';

/** The body's limits fields checked (those not given skipped); 400 when their limits are off. */
export function prepareKeyLimits(
  services: LimitServices,
  row: Pick<ApiKeyRow, 'id' | 'organisation_id' | 'workspace_id' | 'name'>,
  body: { usage_limits?: unknown; rate_limits?: unknown },
): Promise<PreparedFields> {
  return prepareLimits(services, { kind: 'api_key', id: row.id, organisationId: row.organisation_id, workspaceId: row.workspace_id, name: row.name }, body);
}

/** The keys' views with their limits fields (null: none) for the limits that are on. */
export function withKeyLimits<T extends { id: string }>(services: LimitServices, shown: readonly T[]): Promise<(T & LimitFields)[]> {
  return withLimits(services, shown, (s) => ({ kind: 'api_key', id: s.id, workspaceId: null }));
}
