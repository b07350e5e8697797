/**
 * Every regular expression a user writes runs on re2js: matching is linear in the input, so no pattern (`(a+)+$`
 * included) can hang the gateway. The price is RE2 syntax: no lookahead, no backreferences. Lookbehinds are enabled
 * (re2js runs them in linear time too).
 *
 * A rule is either a bare pattern (`\d{3}-\d{4}`) or a JavaScript literal (`/hello/i`) whose flags `i`, `m`, `s`
 * are honoured (`g`, `u`, `y` are accepted and ignored: matching is always global-aware and Unicode). Named groups
 * `(?<name>…)` are accepted. Compiled patterns are cached.
 */
import type { RE2JS } from 're2js';

/**
 * re2js (one 260 KB module, a few MB resident) is loaded by the first pattern compiled, not at start: a gateway whose
 * configs use no regex, PII or JSON Schema check never carries it (issue #24, memory). `require` keeps compiling
 * synchronous, as the config checks calling it are.
 */
export const re2 = (): typeof RE2JS => (require('re2js') as typeof import('re2js')).RE2JS;

const LITERAL = /^\/([\s\S]+)\/([gimsuyd]*)$/;
const cache = new Map<string, RE2JS>();
const CACHE_LIMIT = 1000;

export class RegexSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegexSyntaxError';
  }
}

export interface CompileOptions {
  /** Extra re2js flags (e.g. RE2JS.CASE_INSENSITIVE). */
  flags?: number;
  /** Read `/…/flags` as a JavaScript literal (default true); JSON Schema `pattern`s are plain sources. */
  literal?: boolean;
}

export function compileRegex(rule: string, options: CompileOptions = {}): RE2JS {
  const extraFlags = options.flags ?? 0;
  const allowLiteral = options.literal ?? true;
  const key = `${extraFlags}:${allowLiteral ? 1 : 0}\u0000${rule}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let pattern = rule;
  const RE2 = re2();
  let flags = extraFlags | RE2.LOOKBEHINDS;
  const literal = allowLiteral ? LITERAL.exec(rule) : null;
  if (literal) {
    pattern = literal[1] as string;
    const letters = literal[2] as string;
    if (letters.includes('i')) flags |= RE2.CASE_INSENSITIVE;
    if (letters.includes('m')) flags |= RE2.MULTILINE;
    if (letters.includes('s')) flags |= RE2.DOTALL;
  }
  let compiled: RE2JS;
  try {
    compiled = RE2.compile(RE2.translateRegExp(pattern), flags);
  } catch (error) {
    throw new RegexSyntaxError((error as Error).message);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return compiled;
}

/** A violation (`<name>: invalid regular expression: …`) when the rule does not compile. */
export function regexRule(rule: string, name: string): string[] {
  try {
    compileRegex(rule);
    return [];
  } catch (error) {
    return [`${name}: invalid regular expression (RE2 syntax): ${(error as Error).message}`];
  }
}
