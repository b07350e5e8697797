/**
 * Slugs of integrations, providers and virtual keys: `^[a-z0-9][a-z0-9_-]{1,62}$`. They are found by id or slug, so
 * a slug never has an id's shape; and `@<slug>` must reach the stored object, so a slug is never a provider's name
 * (`@openai` means the openai provider itself).
 */
import { Errors } from '@gateway/sdk';
import type { ProviderIds } from './context.ts';

export const SLUG = '^[a-z0-9][a-z0-9_-]{1,62}$';
const SLUG_RE = new RegExp(SLUG);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function checkSlug(slug: string, param: string, providerIds: ProviderIds | undefined): string {
  if (!SLUG_RE.test(slug)) throw Errors.badRequest(`${param} must match ${SLUG}`, param);
  if (UUID.test(slug)) throw Errors.badRequest(`${param} must not have the shape of an id`, param);
  if (providerIds?.has(slug)) throw Errors.badRequest(`${param} "${slug}" is the name of a provider: @${slug} would mean that provider`, param);
  return slug;
}

/** A slug made from a name (accents dropped, other characters turned into dashes), at least two characters. */
export function slugFromName(name: string, fallback: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return base.length >= 2 && !UUID.test(base) ? base : `${fallback}${base ? `-${base}` : ''}`.slice(0, 50).replace(/-+$/, '');
}

/** `base`, or the first of `base-2`, `base-3`, … that is free (and not a provider name). */
export function freeSlug(base: string, taken: ReadonlySet<string>, providerIds: ProviderIds | undefined): string {
  const free = (s: string) => !taken.has(s) && !providerIds?.has(s);
  if (free(base)) return base;
  for (let n = 2; ; n++) if (free(`${base}-${n}`)) return `${base}-${n}`;
}
