/**
 * SPEC.md's cross-field rules, which a JSON schema cannot say. Applied to the root and to every target (a target is
 * a config). The value may have failed the schema, so every read here is type-checked before use.
 */
import { parseParamPath } from '@gateway/sdk';
import { formatPath, type PathSegment } from './path.ts';

type Obj = Record<string, unknown>;

const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);
const has = (config: Obj, key: string) => config[key] !== undefined;
const hasAll = (config: Obj, keys: readonly string[]) => keys.every((key) => has(config, key));

/** SPEC.md: "A config is valid only when at least one of these property sets is present". */
const PROPERTY_SETS: readonly (readonly string[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['provider', 'svcA_access_key_id', 'svcA_secret_access_key'],
  ['provider', 'svcC_region', 'svcC_service_account_json'],
  ['provider', 'svcC_region', 'svcC_project_id'],
  ['provider', 'svcB_deployment_name', 'svcB_deployment_type', 'svcB_region', 'svcB_api_version'],
  ['provider', 'svcB_endpoint_name', 'svcB_deployment_type'],
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
  ['passthrough'],
  // Not in SPEC.md's list, but the same thing under another name: `Authorization` is the api key in bearer form,
  // and a `@slug` provider carries stored credentials the way a virtual key does (SPEC.md recommends slugs).
  ['provider', 'Authorization'],
  // An Entra ID service principal is the Azure-style provider's credential in place of an api key.
  ['provider', 'svcB_entra_tenant_id', 'svcB_entra_client_id', 'svcB_entra_client_secret'],
];
const SETS_TEXT = PROPERTY_SETS.map((set) => set.join('+')).join(', ');

/** Cloud credential sets that stand in for an api key (the provider+svc… sets above). */
const CLOUD_CREDENTIALS: readonly (readonly string[])[] = PROPERTY_SETS.filter((set) =>
  set.some((key) => key.startsWith('svc')),
).map((set) => set.filter((key) => key !== 'provider'));

const PASSTHROUGH_EXCLUSIVE = ['targets', 'strategy', 'override_params', 'input_guardrails', 'output_guardrails'];

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header value may hold: visible Latin-1 characters, spaces and tabs (no CR, LF, NUL or other controls). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Config fields that travel to a provider inside request headers (or a signature over them). */
const HEADER_BOUND = ['api_key', 'Authorization', 'svcD_organization', 'svcD_project', 'svcA_access_key_id', 'svcA_secret_access_key', 'svcA_session_token'] as const;

const isSlug = (provider: unknown) => typeof provider === 'string' && provider.startsWith('@');

/** Violations of the cross-field rules in `config` and all its targets. Depth was bounded by `scan`. */
export function ruleViolations(config: unknown, at: PathSegment[] = []): string[] {
  if (!isObj(config)) return [];
  const out: string[] = [];
  const where = (...rest: PathSegment[]) => formatPath([...at, ...rest]);
  const report = (path: string, reason: string) => out.push(`${path}: ${reason}`);

  const satisfiesSet = PROPERTY_SETS.some((set) => hasAll(config, set)) || isSlug(config.provider);
  if (!satisfiesSet) report(where(), `must contain at least one of these property sets: ${SETS_TEXT}`);

  if (has(config, 'provider') && !has(config, 'custom_host') && !has(config, 'api_key')) {
    const credentialed =
      has(config, 'virtual_key') ||
      config.passthrough === true ||
      has(config, 'Authorization') ||
      isSlug(config.provider) ||
      CLOUD_CREDENTIALS.some((set) => hasAll(config, set));
    if (!credentialed) {
      report(where('api_key'), 'required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)');
    }
  }

  const { strategy, targets } = config;
  if (has(config, 'strategy') && !has(config, 'targets')) report(where('targets'), 'required when strategy is set');
  if (has(config, 'targets') && !has(config, 'strategy')) report(where('strategy'), 'required when targets is set');
  if (Array.isArray(targets) && targets.length === 0) report(where('targets'), 'must not be empty');
  if (isObj(strategy) && strategy.mode === 'conditional') conditional(strategy, targets, where, report);

  if (config.passthrough === true) {
    for (const key of PASSTHROUGH_EXCLUSIVE) {
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
  for (const field of HEADER_BOUND) {
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

  if (Array.isArray(targets)) targets.forEach((target, i) => out.push(...ruleViolations(target, [...at, 'targets', i])));
  return out;
}

/** Conditional mode: `conditions` and `default` are required, and `then`/`default` name a target by `name`. */
function conditional(
  strategy: Obj,
  targets: unknown,
  where: (...rest: PathSegment[]) => string,
  report: (path: string, reason: string) => void,
): void {
  if (!has(strategy, 'conditions')) report(where('strategy', 'conditions'), 'required when mode is conditional');
  if (!has(strategy, 'default')) report(where('strategy', 'default'), 'required when mode is conditional');
  if (!Array.isArray(targets)) return;
  const names = new Set(targets.filter(isObj).map((t) => t.name).filter((n) => typeof n === 'string'));
  const check = (name: unknown, path: string) => {
    if (typeof name === 'string' && !names.has(name)) report(path, `names no target (${JSON.stringify(name)})`);
  };
  if (Array.isArray(strategy.conditions)) {
    strategy.conditions.forEach((c, i) => {
      if (isObj(c)) check(c.then, where('strategy', 'conditions', i, 'then'));
    });
  }
  check(strategy.default, where('strategy', 'default'));
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
