import { cachedParamPath, type GatewayRequest, valueAtPath } from '@gateway/sdk';

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
 * Refuses patterns that can backtrack catastrophically: a quantified group that itself contains a quantifier or an
 * alternation, at any depth (`(a+)+`, `((a)+)+`, `(a|a)*`), and back-references. A user's regex must not stall the
 * gateway.
 */
export function isSafePattern(source: string): boolean {
  if (source.length > 512 || /\\[1-9]/.test(source)) return false;
  // For each open group: whether something inside it repeats or alternates.
  const stack: boolean[] = [];
  let lastGroupRisky = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      i++;
      lastGroupRisky = false;
      continue;
    }
    if (ch === '[') {
      // Skip a character class: nothing inside it nests.
      i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      lastGroupRisky = false;
      continue;
    }
    const quantifier = ch === '+' || ch === '*' || ch === '{' || (ch === '?' && source[i - 1] !== '(');
    if (quantifier) {
      if (lastGroupRisky && ch !== '?') return false;
      if (stack.length) stack[stack.length - 1] = true;
      lastGroupRisky = false;
      continue;
    }
    if (ch === '(') {
      stack.push(false);
      lastGroupRisky = false;
    } else if (ch === ')') {
      const risky = stack.pop() ?? false;
      if (stack.length && risky) stack[stack.length - 1] = true;
      lastGroupRisky = risky;
    } else if (ch === '|') {
      if (stack.length) stack[stack.length - 1] = true;
      lastGroupRisky = false;
    } else {
      lastGroupRisky = false;
    }
  }
  return true;
}

const regexCache = new Map<string, RegExp | null>();
function safeRegex(source: string): RegExp | null {
  if (!regexCache.has(source)) {
    let re: RegExp | null = null;
    if (isSafePattern(source)) {
      try {
        re = new RegExp(source);
      } catch {
        re = null;
      }
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(source, re);
  }
  return regexCache.get(source) ?? null;
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
      const re = typeof arg === 'string' ? safeRegex(arg) : null;
      return re !== null && typeof value === 'string' && re.test(value);
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
