/**
 * Hooks and guardrails in a config (SPEC.md "Hooks", "Guardrail entries"): the checks they name must exist and their
 * parameters must pass the check's own `validate()`. The registry of checks lives with the plugins, so it reaches
 * validation through a seam the server sets at start-up, before traffic (configs are cached by header value: a
 * change of seams clears that cache). Without a check lookup (the guardrail engine is off, or a bare validator in a
 * test) only the schema applies and these rules are skipped.
 */
import { Seam } from './seam.ts';
import { GUARDRAIL_POLICY_KEYS, type GuardrailCheck, type GuardrailScope, type SavedGuardrailResolver } from '@gateway/sdk';
import { loadedConfig } from './fields.ts';
import { clearConfigCache } from './parse.ts';
import { formatPath, type PathSegment } from './path.ts';

export type CheckLookup = (id: string) => GuardrailCheck | undefined;

/** The types of service `savedGuardrails`, declared in the SDK with its token. */
export type { GuardrailScope, SavedGuardrail, SavedGuardrailResolver } from '@gateway/sdk';

const checkLookup = new Seam<CheckLookup>(() => clearConfigCache());
const savedGuardrails = new Seam<SavedGuardrailResolver>(() => clearConfigCache());

/**
 * The check registry, as the server wires it once plugins are loaded; undefined turns these rules off. Returns the
 * function that takes it out again (the server calls it when the gateway closes).
 */
export function setCheckLookup(fn: CheckLookup | undefined): () => void {
  return checkLookup.push(fn);
}

/** Resolves string entries of `input_guardrails` / `output_guardrails` (saved guardrails); undefined: none can be. */
export function setSavedGuardrailResolver(fn: SavedGuardrailResolver | undefined): () => void {
  return savedGuardrails.push(fn);
}


/** A check id as the registry knows it: a bare name means a check of the `default` plugin (`contains` → `default.contains`). */
export const qualifyCheckId = (id: string): string => (id.includes('.') ? id : `default.${id}`);

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A reason of the form `param: why` from a check's validate() is reported at `<check path>.param`. */
const RELATIVE = /^([A-Za-z_$][\w$-]*(?:(?:\.[A-Za-z_$][\w$-]*)|\[\d+\])*): /;

/**
 * Violations of the check rules in the root config. Undefined lookup: none (the rules are off). Saved guardrails
 * are looked up for `scope`; without one, none can be named.
 */
export function hookViolations(config: unknown, scope?: GuardrailScope): string[] {
  const lookup = checkLookup.current;
  const resolveSaved = savedGuardrails.current;
  if (!lookup || !isObj(config)) return [];
  // The lists are the hook engine's fields: without it loaded, the schema refuses them as unknown, and that is all.
  const { declared } = loadedConfig();
  const out: string[] = [];
  const check = (id: unknown, parameters: unknown, at: PathSegment[], idAt: PathSegment[]) => {
    if (typeof id !== 'string') return; // the schema reports it
    const found = lookup(qualifyCheckId(id));
    if (!found) {
      out.push(`${formatPath(idAt)}: unknown guardrail check ${JSON.stringify(id.slice(0, 128))}`);
      return;
    }
    if (!isObj(parameters)) return; // the schema reports it
    const path = formatPath(at);
    const timeout = parameters.timeout;
    if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0)) {
      out.push(`${formatPath([...at, 'timeout'])}: must be a positive number of milliseconds`);
    }
    if (!found.validate) return;
    let reasons: string[];
    try {
      reasons = found.validate(parameters);
    } catch (error) {
      out.push(`${path}: parameters could not be validated (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    for (const reason of reasons ?? []) {
      let text = String(reason);
      if (text.startsWith('parameters: ')) text = text.slice('parameters: '.length); // the parameters object itself
      const rel = RELATIVE.exec(text);
      out.push(rel ? `${path}${text.startsWith('[') ? '' : '.'}${text}` : `${path}: ${text}`);
    }
  };

  for (const key of ['before_request_hooks', 'after_request_hooks'] as const) {
    const hooks = config[key];
    if (!Array.isArray(hooks) || !declared.has(key)) continue;
    hooks.forEach((hook, i) => {
      if (!isObj(hook) || !Array.isArray(hook.checks)) return;
      hook.checks.forEach((c, j) => {
        if (isObj(c)) check(c.id, c.parameters, [key, i, 'checks', j, 'parameters'], [key, i, 'checks', j, 'id']);
      });
    });
  }
  for (const key of ['input_guardrails', 'output_guardrails'] as const) {
    const entries = config[key];
    if (!Array.isArray(entries) || !declared.has(key)) continue;
    entries.forEach((entry, i) => {
      let object: unknown = entry;
      if (typeof entry === 'string') {
        const shown = JSON.stringify(entry.slice(0, 128));
        if (!resolveSaved) {
          out.push(`${formatPath([key, i])}: ${shown} names a saved guardrail, and no guardrail store is loaded to resolve it`);
          return;
        }
        object = scope ? resolveSaved(entry, scope) : undefined;
        if (!isObj(object)) {
          out.push(`${formatPath([key, i])}: no saved guardrail with id ${shown}`);
          return;
        }
      }
      if (!isObj(object)) return;
      for (const [name, parameters] of Object.entries(object)) {
        if (GUARDRAIL_POLICY_KEYS.has(name)) continue;
        // A saved guardrail's checks are reported at the entry that names it.
        const at: PathSegment[] = typeof entry === 'string' ? [key, i] : [key, i, name];
        if (typeof entry === 'string' && !lookup(qualifyCheckId(name))) {
          out.push(`${formatPath(at)}: saved guardrail ${JSON.stringify(entry)} uses unknown guardrail check ${JSON.stringify(name.slice(0, 128))}`);
          continue;
        }
        check(name, parameters, at, at);
      }
    });
  }
  for (const key of ['before_request_hooks', 'after_request_hooks', 'input_guardrails', 'output_guardrails'] as const) {
    if (!Array.isArray(config.targets)) break;
    if (!declared.has(key)) continue;
    config.targets.forEach((target, i) => nestedHooks(target, ['targets', i], key, out));
  }
  return out;
}

/**
 * Hooks run once per request, for the whole request, from the root config (ARCHITECTURE.md: input guardrails run
 * before routing). A hook list on a target would never run, so it is refused rather than silently ignored.
 */
function nestedHooks(target: unknown, at: PathSegment[], key: string, out: string[]): void {
  if (!isObj(target)) return;
  if (target[key] !== undefined) out.push(`${formatPath([...at, key])}: hooks and guardrails apply to the whole request; set them on the root config`);
  if (Array.isArray(target.targets)) target.targets.forEach((child, i) => nestedHooks(child, [...at, 'targets', i], key, out));
}

const GUARDRAIL_LISTS = ['input_guardrails', 'output_guardrails'] as const;

/** The config names a saved guardrail (a string item of a guardrail list): what it means depends on who sends it. */
export function namesSavedGuardrails(config: unknown): boolean {
  return isObj(config) && GUARDRAIL_LISTS.some((key) => Array.isArray(config[key]) && config[key].some((item) => typeof item === 'string'));
}

/**
 * A validated config with each saved guardrail it names put in, as `scope` sees it (the hook result keeps the id the
 * config used unless the guardrail names itself): the hook engine then never looks an id up without a caller.
 */
export function withSavedGuardrails<T extends object>(config: T, scope: GuardrailScope): T {
  const resolveSaved = savedGuardrails.current;
  const copy = { ...config } as Record<string, unknown>;
  for (const key of GUARDRAIL_LISTS) {
    const list = copy[key];
    if (!Array.isArray(list)) continue;
    copy[key] = list.map((item: unknown) => {
      if (typeof item !== 'string') return item;
      const found = resolveSaved?.(item, scope);
      return found ? { ...found, id: typeof found.id === 'string' ? found.id : item } : item;
    });
  }
  return copy as T;
}
