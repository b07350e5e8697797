/**
 * The rules a plugin's config fields carry beyond their schema (`ConfigFieldSet.rules` in the SDK): a field's own
 * check, a field refused on targets, a field whose value means something for each sender (it names saved guardrails)
 * and what it names put in for them. Nothing here names a field: the rules come from what loaded (fields.ts). The
 * saved guardrails a sender may use reach these rules through a seam the server sets at start-up, before traffic
 * (configs are cached by header value: a change of seams clears that cache).
 */
import type { FieldContext, GuardrailScope, SavedGuardrailResolver } from '@gateway/sdk';
import { type LoadedConfig, loadedConfig } from './fields.ts';
import { clearConfigCache } from './parse.ts';
import { formatPath, type PathSegment } from './path.ts';
import { Seam } from './seam.ts';

/** The types of service `savedGuardrails`, declared in the SDK with its token. */
export type { GuardrailScope, SavedGuardrail, SavedGuardrailResolver } from '@gateway/sdk';

const savedGuardrails = new Seam<SavedGuardrailResolver>(() => clearConfigCache());

/**
 * The saved guardrails a config may name, by the sender's scope (the store's service); undefined: none can be.
 * Returns the function that takes it out again (the server calls it when the gateway closes).
 */
export function setSavedGuardrailResolver(fn: SavedGuardrailResolver | undefined): () => void {
  return savedGuardrails.push(fn);
}

/** What the rules may ask about a config sent by `scope` (none: checked without a sender, no guardrail is theirs). */
function contextFor(scope: GuardrailScope | undefined): FieldContext {
  const resolve = savedGuardrails.current;
  if (!resolve) return {};
  return { savedGuardrail: (id) => (scope ? resolve(id, scope) : undefined) };
}

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);
const targetsOf = (node: Obj): unknown[] => (Array.isArray(node.targets) ? node.targets : []);

/**
 * Violations of the declared fields' rules in a root config, in this order: each field's check at the root (in
 * declaration order), each root-only field found on a target, then the checks of fields a target may hold, target by
 * target. `scope`: whose saved guardrails the config may name (none without it).
 */
export function fieldViolations(config: unknown, scope?: GuardrailScope, loaded: LoadedConfig = loadedConfig()): string[] {
  if (!isObj(config) || loaded.fieldRules.length === 0) return [];
  const context = contextFor(scope);
  const out: string[] = [];
  const checkNode = (node: Obj, at: PathSegment[], rootOnlyToo: boolean) => {
    for (const { field, rules } of loaded.fieldRules) {
      if (!rules.check || node[field] === undefined || (rules.rootOnly !== undefined && !rootOnlyToo)) continue;
      let found: ReturnType<NonNullable<typeof rules.check>>;
      try {
        found = rules.check(node[field], context);
      } catch (error) {
        out.push(`${formatPath([...at, field])}: could not be checked (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      for (const v of found) out.push(`${formatPath([...at, field, ...v.path])}: ${v.reason}`);
    }
  };
  checkNode(config, [], true);

  for (const { field, rules } of loaded.fieldRules) {
    if (rules.rootOnly === undefined) continue;
    const refuse = (node: unknown, at: PathSegment[]): void => {
      if (!isObj(node)) return;
      if (node[field] !== undefined) out.push(`${formatPath([...at, field])}: ${rules.rootOnly}`);
      targetsOf(node).forEach((child, i) => refuse(child, [...at, 'targets', i]));
    };
    targetsOf(config).forEach((target, i) => refuse(target, ['targets', i]));
  }

  if (loaded.fieldRules.some(({ rules }) => rules.check && rules.rootOnly === undefined)) {
    const walk = (node: unknown, at: PathSegment[]): void => {
      if (!isObj(node)) return;
      checkNode(node, at, false);
      targetsOf(node).forEach((child, i) => walk(child, [...at, 'targets', i]));
    };
    targetsOf(config).forEach((target, i) => walk(target, ['targets', i]));
  }
  return out;
}

/** The config holds a value that means something for each sender (`FieldRules.perSender`): validate it per sender. */
export function dependsOnSender(config: unknown, loaded: LoadedConfig = loadedConfig()): boolean {
  if (!isObj(config)) return false;
  return loaded.fieldRules.some(({ field, rules }) => rules.perSender !== undefined && config[field] !== undefined && rules.perSender(config[field]));
}

/** A valid root config with what its fields name put in for `scope` (`FieldRules.resolve`); the input is not changed. */
export function resolvedForSender<T extends object>(config: T, scope: GuardrailScope, loaded: LoadedConfig = loadedConfig()): T {
  const context = contextFor(scope);
  const copy = { ...config } as Record<string, unknown>;
  for (const { field, rules } of loaded.fieldRules) {
    if (rules.resolve && copy[field] !== undefined) copy[field] = rules.resolve(copy[field], context);
  }
  return copy as T;
}
