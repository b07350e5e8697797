/** Workspace slugs: the kit's rule (`^[a-z0-9][a-z0-9-]{1,62}$`, never id-shaped), unique per organisation. */
import { checkSlug as checkKitSlug, freeSlug as firstFree, SLUG_PATTERN, slugFromName as kitSlugFromName } from '@gateway/admin-kit';

export { SLUG_PATTERN };

/** A slug given by a client; 400 naming `param` otherwise. */
export function checkSlug(slug: string, param = 'slug'): string {
  // Workspaces are found by id or slug: a slug that looks like an id could shadow another workspace.
  return checkKitSlug(slug, param, { idName: 'a workspace id' });
}

/** A slug made from a workspace's name (`workspace-…` when the name gives too little). */
export const slugFromName = (name: string): string => kitSlugFromName(name, 'workspace', 56);

/** The first of `base`, `base-2`, `base-3`, … that `taken` does not hold. */
export const freeSlug = (base: string, taken: ReadonlySet<string>): string => firstFree(base, (s) => !taken.has(s));
