/**
 * Slugs of stored objects. Objects are found by id or slug, so a slug never has an id's shape; names turn into
 * slugs the same way everywhere (accents dropped, runs of other characters one dash).
 */
import { Errors, type GatewayError } from '@gateway/sdk';
import { isUniqueViolation } from './unique.ts';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a string shaped like an id (`crypto.randomUUID()`). */
export const isUuid = (value: string): boolean => UUID.test(value);

export interface SlugRule {
  /** Default SLUG_PATTERN; the message quotes its source. */
  pattern?: RegExp;
  /** What the 400 calls an id: `an id` by default. */
  idName?: string;
}

/** A client's slug: the pattern, and never shaped like an id. 400 naming `param` otherwise. */
export function checkSlug(slug: string, param = 'slug', rule: SlugRule = {}): string {
  const pattern = rule.pattern ?? SLUG_PATTERN;
  if (!pattern.test(slug)) throw Errors.badRequest(`${param} must match ${pattern.source}`, param);
  if (isUuid(slug)) throw Errors.badRequest(`${param} must not have the shape of ${rule.idName ?? 'an id'}`, param);
  return slug;
}

/** The slug form of a name, at most `max` characters, no dash at either end; may be empty. */
export function slugBase(name: string, max: number): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
}

/** A slug made from a name, at least two characters and never id-shaped: `fallback` (plus the base) otherwise. */
export function slugFromName(name: string, fallback: string, max: number): string {
  const base = slugBase(name, max);
  return base.length >= 2 && !isUuid(base) ? base : `${fallback}${base ? `-${base}` : ''}`.slice(0, max).replace(/-+$/, '');
}

/** `base`, or the first of `base-2`, `base-3`, … that `free` accepts. */
export function freeSlug(base: string, free: (slug: string) => boolean): string {
  if (free(base)) return base;
  for (let n = 2; ; n++) if (free(`${base}-${n}`)) return `${base}-${n}`;
}

/** A slug made from a name plus a random suffix, so that two objects of the same name do not collide. */
export function generatedSlug(name: string): string {
  const base = slugBase(name, 48);
  const suffix = crypto.randomUUID().slice(0, 8);
  return base ? `${base}-${suffix}` : `s-${suffix}`;
}

/**
 * Writes under a client's slug, or under one generated from `name`: a generated slug that loses a race with a
 * concurrent write is generated again (three tries in all); a client's slug that is taken is `taken(slug)`.
 */
export async function writeWithSlug<T>(given: string | undefined, name: string, write: (slug: string) => Promise<T>, taken: (slug: string) => GatewayError): Promise<T> {
  let slug = given ?? generatedSlug(name);
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(slug);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (given !== undefined) throw taken(given);
      if (attempt >= 2) throw error;
      slug = generatedSlug(name);
    }
  }
}
