/** Workspace slugs: `^[a-z0-9][a-z0-9-]{1,62}$`, unique per organisation, never shaped like an id. */
import { Errors } from '@gateway/sdk';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A slug given by a client; 400 naming `param` otherwise. */
export function checkSlug(slug: string, param = 'slug'): string {
  if (!SLUG_PATTERN.test(slug)) throw Errors.badRequest(`${param} must match ^[a-z0-9][a-z0-9-]{1,62}$`, param);
  // Workspaces are found by id or slug: a slug that looks like an id could shadow another workspace.
  if (UUID.test(slug)) throw Errors.badRequest(`${param} must not have the shape of a workspace id`, param);
  return slug;
}

/** A slug made from a name: accents dropped, runs of other characters turned into one dash. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return base.length >= 2 && !UUID.test(base) ? base : `workspace${base ? `-${base}` : ''}`.slice(0, 56).replace(/-+$/, '');
}

/** The first of `base`, `base-2`, `base-3`, … that `taken` does not hold (the suffix fits within 63 characters). */
export function freeSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
