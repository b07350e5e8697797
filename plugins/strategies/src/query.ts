import { cachedParamPath, type GatewayRequest, valueAtPath } from '@gateway/sdk';
import type { RE2JS } from 're2js';

/**
 * Conditional-routing queries, Mongo style: `{ "metadata.tier": { "$eq": "pro" } }`, `$and` / `$or` lists, and the
 * operators $eq $ne $gt $gte $lt $lte $in $nin $regex $exists. Fields address `metadata.<key>`, `params.<path>`
 * (the request body, any depth) and `url.pathname`.
 */
export type Query = Record<string, unknown>;

type Getter = (field: string) => unknown;

export function requestGetter(req: GatewayRequest): Getter {
  return (field) => {
    if (field === 'url.pathname') return `/v1${req.path}`;
    if (field.startsWith('metadata.')) {
      const key = field.slice(9);
      return Object.hasOwn(req.metadata, key) ? req.metadata[key] : undefined;
    }
    if (field.startsWith('params.')) {
      const segments = cachedParamPath(field.slice(7));
      return segments ? valueAtPath(req.body, segments) : undefined;
    }
    return undefined;
  };
}

/**
 * `$regex` runs on RE2 (re2js): matching takes linear time in the input, so no pattern a user writes can stall the
 * gateway (backtracking engines blow up on `(a+)+$` or `a*a*a*a*b`). Patterns RE2 cannot express (back-references,
 * look-arounds) never match.
 */
const regexCache = new Map<string, RE2JS | null>();
function compiled(source: string): RE2JS | null {
  let re = regexCache.get(source);
  if (re === undefined) {
    try {
      // Loaded by the first `$regex` (require: synchronous, cached), not at start: few configs have one.
      re = source.length <= 4096 ? (require('re2js') as typeof import('re2js')).RE2JS.compile(source) : null;
    } catch {
      re = null;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(source, re);
  }
  return re;
}

function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function matchOperator(value: unknown, op: string, arg: unknown): boolean {
  switch (op) {
    case '$eq':
      return value === arg;
    case '$ne':
      return value !== arg;
    case '$gt':
      return (compare(value, arg) ?? Number.NaN) > 0;
    case '$gte':
      return (compare(value, arg) ?? Number.NaN) >= 0;
    case '$lt':
      return (compare(value, arg) ?? Number.NaN) < 0;
    case '$lte':
      return (compare(value, arg) ?? Number.NaN) <= 0;
    case '$in':
      return Array.isArray(arg) && arg.includes(value);
    case '$nin':
      return Array.isArray(arg) && !arg.includes(value);
    case '$regex': {
      const re = typeof arg === 'string' ? compiled(arg) : null;
      return re !== null && typeof value === 'string' && re.matcher(value).find();
    }
    case '$exists':
      return (value !== undefined) === Boolean(arg);
    default:
      return false;
  }
}

function matchField(value: unknown, condition: unknown): boolean {
  if (condition !== null && typeof condition === 'object' && !Array.isArray(condition)) {
    const entries = Object.entries(condition);
    if (entries.length && entries.every(([k]) => k.startsWith('$')))
      return entries.every(([op, arg]) => matchOperator(value, op, arg));
  }
  // A bare value means equality.
  return value === condition;
}

export function matches(query: Query, get: Getter): boolean {
  return Object.entries(query).every(([key, condition]) => {
    if (key === '$and') return Array.isArray(condition) && condition.every((q) => matches(q as Query, get));
    if (key === '$or') return Array.isArray(condition) && condition.some((q) => matches(q as Query, get));
    return matchField(get(key), condition);
  });
}
