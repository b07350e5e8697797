/** What a fixture gives for one principal's call of a route: the path's parameters, a query and a valid body. */
import type { PrincipalName } from './principals.ts';
import type { Json, World } from './world.ts';

export interface CallSpec {
  /** A value for every `:param` of the route's path. */
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

/**
 * Prepares one principal's call. Resources a call changes or removes are made fresh for each principal (with the
 * bootstrap organisation-service key), so that every call meets the same state; read-only routes use shared ones.
 */
export type Fixture = (world: World, who: PrincipalName) => Promise<CallSpec>;

/** The path of `route` (`/users/:userId`) with its parameters filled in; throws when one is missing. */
export function fillPath(path: string, spec: CallSpec): string {
  const filled = path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = spec.params?.[name];
    if (value === undefined) throw new Error(`the fixture gives no :${name} for ${path}`);
    return encodeURIComponent(value);
  });
  const query = spec.query ? `?${new URLSearchParams(spec.query).toString()}` : '';
  return filled + query;
}

/** `id` of a created resource. */
export function idOf(body: Json): string {
  if (typeof body.id !== 'string') throw new Error(`no id in ${JSON.stringify(body)}`);
  return body.id;
}
