/**
 * The limits fields of an administration object (an API key, a virtual key, an integration's workspace access):
 * `usage_limits`, kept, enforced and reset by the usage-limits plugin (service `usageLimits`), and `rate_limits`, by
 * the rate-limits plugin (service `rateLimits`), for the routes that own the object. A field whose service is absent
 * (plugin not loaded, its flag off) is refused and not shown.
 */
import { Errors } from '@gateway/sdk';
import {
  type LimitSubject,
  type LimitSubjectRef,
  limitSubjectKey,
  type PreparedLimits,
  type RateLimitView,
  type SubjectLimits,
  type SubjectRateLimits,
  type SubjectUsageLimits,
  type UsageLimitsView,
} from './contracts.ts';

/** The services of the limits fields, each absent while its limits are off. */
export interface LimitServices {
  readonly usage_limits?: SubjectUsageLimits;
  readonly rate_limits?: SubjectRateLimits;
}

/** The limits fields as an object's answers show them (null: none set), each only while its limits are on. */
export interface LimitFields {
  usage_limits?: UsageLimitsView | null;
  rate_limits?: RateLimitView[] | null;
}

type Field = keyof LimitServices;
const FIELDS: readonly Field[] = ['usage_limits', 'rate_limits'];
const NAMES: Record<Field, string> = { usage_limits: 'usage limits', rate_limits: 'rate limits' };

/** Values checked by their service, to save once the object is written. */
export type PreparedFields = readonly { readonly service: SubjectLimits<unknown>; readonly prepared: PreparedLimits }[];

/**
 * The limits fields `body` gives, checked (a field not given is skipped); 400 naming a field whose limits are off.
 * `path` prefixes the fields in messages (`workspaces[0]`).
 */
export async function prepareLimits(services: LimitServices, subject: LimitSubject, body: Partial<Record<Field, unknown>>, path = ''): Promise<PreparedFields> {
  const out: { service: SubjectLimits<unknown>; prepared: PreparedLimits }[] = [];
  for (const field of FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const at = path ? `${path}.${field}` : field;
    const service = services[field] as SubjectLimits<unknown> | undefined;
    if (!service) throw Errors.badRequest(`${at}: ${NAMES[field]} are not enabled on this deployment`, at);
    out.push({ service, prepared: await service.prepare(subject, value, at) });
  }
  return out;
}

/** Saves prepared values, after the objects were written; `id` names an object created since (its id was not known). */
export async function saveLimits(prepared: PreparedFields, id?: string): Promise<void> {
  const byService = new Map<SubjectLimits<unknown>, PreparedLimits[]>();
  for (const { service, prepared: p } of prepared) {
    const value = id === undefined ? p : { ...p, subject: { ...p.subject, id } };
    byService.set(service, [...(byService.get(service) ?? []), value]);
  }
  for (const [service, list] of byService) await service.save(list);
}

/** Items shown with their limits fields (null: none) for the limits that are on; unchanged otherwise. */
export async function withLimits<T>(services: LimitServices, items: readonly T[], subjectOf: (item: T) => LimitSubjectRef): Promise<(T & LimitFields)[]> {
  const on = FIELDS.filter((f) => services[f]);
  if (on.length === 0 || items.length === 0) return [...items] as (T & LimitFields)[];
  const refs = items.map(subjectOf);
  const views = await Promise.all(on.map((f) => (services[f] as SubjectLimits<unknown>).views(refs)));
  return items.map((item, i) => {
    const key = limitSubjectKey(refs[i]!);
    const shown: Record<string, unknown> = {};
    on.forEach((f, j) => {
      shown[f] = views[j]!.get(key) ?? null;
    });
    return { ...item, ...shown };
  });
}

/** Drops the limits of objects deleted. */
export async function removeLimits(services: LimitServices, subjects: readonly LimitSubjectRef[]): Promise<void> {
  for (const f of FIELDS) await services[f]?.remove(subjects);
}
