/**
 * Slugs of integrations, providers and virtual keys: `^[a-z0-9][a-z0-9_-]{1,62}$`, never id-shaped (the kit's rule).
 * `@<slug>` must reach the stored object, so a slug is never a provider's name (`@openai` means the openai provider
 * itself).
 */
import { checkSlug as checkKitSlug, freeSlug as firstFree, slugFromName as kitSlugFromName } from '@gateway/admin-kit';
import { Errors, type GatewayError } from '@gateway/sdk';
import type { ProviderIds } from './context.ts';

const PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}$/;

export function checkSlug(slug: string, param: string, providerIds: ProviderIds | undefined): string {
  checkKitSlug(slug, param, { pattern: PATTERN });
  if (providerIds?.has(slug)) throw Errors.badRequest(`${param} "${slug}" is the name of a provider: @${slug} would mean that provider`, param);
  return slug;
}

/** A slug made from a name (accents dropped, other characters turned into dashes), at least two characters. */
export const slugFromName = (name: string, fallback: string): string => kitSlugFromName(name, fallback, 50);

/** `base`, or the first of `base-2`, `base-3`, … that is free (and not a provider name). */
export const freeSlug = (base: string, taken: ReadonlySet<string>, providerIds: ProviderIds | undefined): string =>
  firstFree(base, (s) => !taken.has(s) && !providerIds?.has(s));

/** How a route says that a slug is taken in its scope (409). */
export type SlugTaken = (slug: string) => GatewayError;

/** A new object's slug: the client's (checked; one in `taken` is a 409), or the first free one made from its name. */
export function newSlug(given: string | undefined, name: string, fallback: string, taken: ReadonlySet<string>, providerIds: ProviderIds | undefined, conflict: SlugTaken): string {
  if (given === undefined) return freeSlug(slugFromName(name, fallback), taken, providerIds);
  const slug = checkSlug(given, 'slug', providerIds);
  if (taken.has(slug)) throw conflict(slug);
  return slug;
}

/** The slug a PUT leaves: `current` unless the client gives another (checked; one `others` count holds is a 409). */
export async function changedSlug(
  given: string | undefined,
  current: string,
  providerIds: ProviderIds | undefined,
  others: (slug: string) => Promise<number>,
  conflict: SlugTaken,
): Promise<string> {
  if (given === undefined || given === current) return current;
  const slug = checkSlug(given, 'slug', providerIds);
  if (await others(slug)) throw conflict(slug);
  return slug;
}
