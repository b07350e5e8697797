/**
 * Which logs a request over the log list or an export means: the common filters (filters.ts) with the caller's
 * visibility, plus the list's older `created_after` / `created_before` (kept for existing clients: the same as
 * time_of_generation_min / _max, errors naming them), under a saved filter's values when `saved_filter_id` names one.
 */
import { and, type Database, gte, lt, type Principal, type SQL } from '@gateway/sdk';
import { type LogScope, logScope, parseTime } from './filters.ts';
import { withSavedFilter } from './saved-filters.ts';
import type { LogColumns, LogVisibilityDeps } from './visibility.ts';

export type SelectionDeps = LogVisibilityDeps & { database: Database };

function legacyTime(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  return parseTime(name, raw.slice(0, 64));
}

export async function logSelection(deps: SelectionDeps, principal: Principal, given: URLSearchParams): Promise<LogScope> {
  const query = await withSavedFilter(deps.database, principal, given);
  const after = legacyTime(query, 'created_after');
  const before = legacyTime(query, 'created_before');
  const scope = await logScope(deps, principal, query);
  if (after === undefined && before === undefined) return scope;
  return {
    ...scope,
    where: (c: LogColumns): SQL =>
      and(scope.where(c), after === undefined ? undefined : gte(c.created_at, after), before === undefined ? undefined : lt(c.created_at, before))!,
  };
}
