/** A key's `usage_limits` (docs/admin/api-keys.md), through admin-kit's helpers for the `usageLimits` service. */
import { type PreparedUsageLimits, prepareUsageLimits, type SubjectUsageLimits, type UsageLimitsView, withUsageLimits } from '@gateway/admin-kit';
import type { ApiKeyRow } from './tables.ts';

/** The body's value checked (undefined: not given); 400 when usage limits are off. */
export function prepareKeyLimits(
  service: SubjectUsageLimits | undefined,
  row: Pick<ApiKeyRow, 'id' | 'organisation_id' | 'workspace_id' | 'name'>,
  value: unknown,
): Promise<PreparedUsageLimits | undefined> {
  return prepareUsageLimits(service, { kind: 'api_key', id: row.id, organisationId: row.organisation_id, workspaceId: row.workspace_id, name: row.name }, value);
}

/** The keys' views with their `usage_limits` (null: none) when usage limits are on. */
export function withKeyLimits<T extends { id: string }>(service: SubjectUsageLimits | undefined, shown: readonly T[]): Promise<(T & { usage_limits?: UsageLimitsView | null })[]> {
  return withUsageLimits(service, shown, (s) => ({ kind: 'api_key', id: s.id, workspaceId: null }));
}
