/**
 * SPEC.md's cross-field rules, which a JSON schema cannot say. Applied to the root and to every target (a target is
 * a config). The value may have failed the schema, so every read here is type-checked before use. The property sets,
 * the credential sets, the header-bound fields, the fields refused beside passthrough and a strategy's own rules come
 * from what loaded (fields.ts).
 */
import { parseParamPath } from '@gateway/sdk';
import { type LoadedConfig, loadedConfig } from './fields.ts';
import { formatPath, type PathSegment } from './path.ts';

type Obj = Record<string, unknown>;

const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);
const has = (config: Obj, key: string) => config[key] !== undefined;
const hasAll = (config: Obj, keys: readonly string[]) => keys.every((key) => has(config, key));

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header value may hold: visible Latin-1 characters, spaces and tabs (no CR, LF, NUL or other controls). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const isSlug = (provider: unknown) => typeof provider === 'string' && provider.startsWith('@');

/** Violations of the cross-field rules in `config` and all its targets. Depth was bounded by `scan`. */
export function ruleViolations(config: unknown, at: PathSegment[] = [], loaded: LoadedConfig = loadedConfig()): string[] {
  if (!isObj(config)) return [];
  const out: string[] = [];
  const where = (...rest: PathSegment[]) => formatPath([...at, ...rest]);
  const report = (path: string, reason: string) => out.push(`${path}: ${reason}`);

  const satisfiesSet = loaded.propertySets.some((set) => hasAll(config, set)) || isSlug(config.provider);
  if (!satisfiesSet) report(where(), `must contain at least one of these property sets: ${loaded.propertySets.map((set) => set.join('+')).join(', ')}`);

  if (has(config, 'provider') && !has(config, 'custom_host') && !has(config, 'api_key')) {
    const credentialed =
      has(config, 'virtual_key') ||
      config.passthrough === true ||
      has(config, 'Authorization') ||
      isSlug(config.provider) ||
      loaded.credentialSets.some((set) => hasAll(config, set));
    if (!credentialed) {
      report(where('api_key'), 'required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)');
    }
  }

  const { strategy, targets } = config;
  if (has(config, 'strategy') && !has(config, 'targets')) report(where('targets'), 'required when strategy is set');
  if (has(config, 'targets') && !has(config, 'strategy')) report(where('strategy'), 'required when targets is set');
  if (Array.isArray(targets) && targets.length === 0) report(where('targets'), 'must not be empty');
  const modeCheck = isObj(strategy) && typeof strategy.mode === 'string' ? loaded.strategyChecks.get(strategy.mode) : undefined;
  if (modeCheck && isObj(strategy)) for (const v of modeCheck(strategy, targets)) report(where(...v.path), v.reason);

  if (config.passthrough === true) {
    for (const key of loaded.notWithPassthrough) {
      if (has(config, key)) report(where(key), 'not allowed when passthrough is true');
    }
  }

  if (Array.isArray(config.drop_params)) {
    config.drop_params.forEach((path, i) => {
      if (typeof path !== 'string') return;
      const parsed = parseParamPath(path);
      if (!parsed.ok) report(where('drop_params', i), `not a valid path (${parsed.reason})`);
    });
  }
  for (const field of loaded.headerBound) {
    const value = config[field];
    if (typeof value === 'string' && !HEADER_VALUE.test(value)) report(where(field), 'contains characters a header value cannot carry');
  }
  if (Array.isArray(config.forward_headers)) {
    config.forward_headers.forEach((name, i) => {
      if (typeof name === 'string' && !HEADER_NAME.test(name)) report(where('forward_headers', i), 'not a valid header name');
    });
  }
  if (typeof config.custom_host === 'string' && !isHttpUrl(config.custom_host)) {
    report(where('custom_host'), 'must be an http(s) URL');
  }

  if (Array.isArray(targets)) targets.forEach((target, i) => out.push(...ruleViolations(target, [...at, 'targets', i], loaded)));
  return out;
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
