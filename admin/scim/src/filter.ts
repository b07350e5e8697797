/**
 * The filters Entra ID and Okta send (RFC 7644 §3.4.2.2): `<attribute> eq "<value>"` on userName, externalId,
 * displayName (attribute names are case-insensitive). Anything else is a 400 invalidFilter, never a full list.
 */
import { ScimError } from './scim-errors.ts';

export interface EqFilter {
  readonly attribute: 'username' | 'externalid' | 'displayname';
  readonly value: string;
}

const EQ = /^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i;
const SUPPORTED = new Set(['username', 'externalid', 'displayname']);

export function parseFilter(filter: string | null): EqFilter | undefined {
  if (filter === null || filter.trim() === '') return undefined;
  const match = EQ.exec(filter);
  const attribute = match?.[1]?.toLowerCase();
  if (!match || !attribute || !SUPPORTED.has(attribute))
    throw new ScimError(400, `Unsupported filter ${JSON.stringify(filter)}: use userName, externalId or displayName eq "value"`, 'invalidFilter');
  return { attribute: attribute as EqFilter['attribute'], value: (match[2] as string).replace(/\\(.)/g, '$1') };
}

/** startIndex (1-based) and count of a list request, clamped as RFC 7644 §3.4.2.4 asks. */
export function pageOf(query: URLSearchParams): { startIndex: number; count: number } {
  const start = Number.parseInt(query.get('startIndex') ?? '1', 10);
  const count = Number.parseInt(query.get('count') ?? '100', 10);
  return { startIndex: Number.isFinite(start) && start >= 1 ? start : 1, count: Number.isFinite(count) ? Math.min(Math.max(count, 0), 1000) : 100 };
}
