/**
 * The path syntax of `drop_params` (and of `params.<path>` in conditional queries), INTERFACE.md:
 * dots for keys, brackets for indices, `[*]` for every item, `["a.b"]` for a key that contains a dot.
 * Exported so the stage that applies the paths parses them exactly as validation accepted them.
 */
export const WILDCARD: unique symbol = Symbol('wildcard');
export type ParamPathSegment = string | number | typeof WILDCARD;

/** Keys that would reach an object's prototype when a path is applied. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const MAX_PATH_CHARS = 1024;
const BARE_KEY = /^[^.[\]"'\s]+/;
const INDEX = /^\[(\d{1,9})\]/;
const QUOTED = /^\["((?:[^"\\]|\\.)*)"\]/;

export type ParamPathResult = { ok: true; segments: ParamPathSegment[] } | { ok: false; reason: string };

export function parseParamPath(path: string): ParamPathResult {
  if (path.length === 0) return { ok: false, reason: 'empty path' };
  if (path.length > MAX_PATH_CHARS) return { ok: false, reason: `longer than ${MAX_PATH_CHARS} characters` };
  const segments: ParamPathSegment[] = [];
  let rest = path;
  let first = true;
  while (rest.length > 0) {
    let match: RegExpExecArray | null;
    if (rest.startsWith('[*]')) {
      segments.push(WILDCARD);
      rest = rest.slice(3);
    } else if ((match = INDEX.exec(rest))) {
      segments.push(Number(match[1]));
      rest = rest.slice(match[0].length);
    } else if ((match = QUOTED.exec(rest))) {
      let key: string;
      try {
        key = JSON.parse(`"${match[1]}"`) as string;
      } catch {
        return { ok: false, reason: `bad escape in ${match[0]}` };
      }
      segments.push(key);
      rest = rest.slice(match[0].length);
    } else {
      const dotted = !first && rest.startsWith('.');
      if (!first && !dotted) return { ok: false, reason: `unexpected "${rest[0]}" at ${path.length - rest.length}` };
      const body = dotted ? rest.slice(1) : rest;
      match = BARE_KEY.exec(body);
      if (!match) return { ok: false, reason: `expected a key at ${path.length - body.length}` };
      segments.push(match[0]);
      rest = body.slice(match[0].length);
    }
    first = false;
  }
  for (const segment of segments) {
    if (typeof segment === 'string' && FORBIDDEN_KEYS.has(segment)) {
      return { ok: false, reason: `forbidden key "${segment}"` };
    }
  }
  return { ok: true, segments };
}

const parsed = new Map<string, ParamPathSegment[] | null>();

/** Parsed once per distinct path (paths come from configs, which repeat); null for an invalid path. */
export function cachedParamPath(path: string): ParamPathSegment[] | null {
  let segments = parsed.get(path);
  if (segments === undefined) {
    const result = parseParamPath(path);
    segments = result.ok ? result.segments : null;
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(path, segments);
  }
  return segments;
}

/** The value at a path (no wildcards), or undefined when any step is missing. Own properties only. */
export function valueAtPath(root: unknown, segments: readonly ParamPathSegment[]): unknown {
  let cur = root;
  for (const segment of segments) {
    if (segment === WILDCARD || cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, segment)) return undefined;
    cur = (cur as Record<string | number, unknown>)[segment];
  }
  return cur;
}
