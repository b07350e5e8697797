/**
 * The `usage_limits` field of an administration object (an API key, a virtual key, an integration's workspace
 * access), for the routes that own it: kept, enforced and reset by the usage-limits plugin (service `usageLimits`).
 * Without that service (plugin not loaded, USAGE_LIMITS_ENABLED=OFF) the field is refused and not shown.
 */
import { Errors } from '@gateway/sdk';
import { type PreparedUsageLimits, type SubjectUsageLimits, type UsageLimitSubject, type UsageLimitsView, usageLimitSubjectKey } from './contracts.ts';

/** The body's value checked (undefined: not given); 400 naming `path` when usage limits are off. */
export async function prepareUsageLimits(service: SubjectUsageLimits | undefined, subject: UsageLimitSubject, value: unknown, path = 'usage_limits'): Promise<PreparedUsageLimits | undefined> {
  if (value === undefined) return undefined;
  if (!service) throw Errors.badRequest(`${path}: usage limits are not enabled on this deployment`, path);
  return service.prepare(subject, value, path);
}

/** Items shown with their `usage_limits` (null: none) when usage limits are on; unchanged otherwise. */
export async function withUsageLimits<T>(
  service: SubjectUsageLimits | undefined,
  items: readonly T[],
  subjectOf: (item: T) => Pick<UsageLimitSubject, 'kind' | 'id' | 'workspaceId'>,
): Promise<(T & { usage_limits?: UsageLimitsView | null })[]> {
  if (!service || items.length === 0) return [...items] as (T & { usage_limits?: UsageLimitsView | null })[];
  const views = await service.views(items.map(subjectOf));
  return items.map((item) => ({ ...item, usage_limits: views.get(usageLimitSubjectKey(subjectOf(item))) ?? null }));
}
