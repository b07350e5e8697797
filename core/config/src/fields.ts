/**
 * The config as the loaded plugins make it (issue #14): the generic fields of `@gateway/sdk` and every field a
 * provider, a strategy or another plugin declares (config-fields.ts in the SDK), assembled and compiled once at
 * start-up (`useLoadedFields`), never per request. Until a gateway sets it, no plugin is loaded: the generic fields
 * only, and no strategy mode.
 */
import {
  type ConfigFieldSet,
  configSchema,
  type FieldRules,
  GENERIC_CONFIG_FIELDS,
  type ProviderAdapter,
  type Strategy,
  type StrategyFieldSet,
} from '@gateway/sdk';
import type { TProperties, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { clearConfigCache } from './parse.ts';
import { Seam } from './seam.ts';

/** What registered config fields: the loaded adapters and strategies, and other plugins' declarations. */
export interface FieldSources {
  providers: Iterable<ProviderAdapter>;
  strategies: Iterable<Strategy>;
  /** Top-level fields of other plugins (`PluginApi.configFields`: the cache, the circuit breaker, hooks), in load order. */
  plugins?: Iterable<{ plugin: string; fields: ConfigFieldSet }>;
}

/** The rules that depend on what loaded, read by validate.ts and rules.ts. */
export interface LoadedConfig {
  readonly compiled: TypeCheck<TSchema>;
  /** SPEC.md's property sets: generic ones with the plugins' placed among them, then the providers' credential sets. */
  readonly propertySets: readonly (readonly string[])[];
  /** Credential sets (without `provider`) that stand in for `api_key`. */
  readonly credentialSets: readonly (readonly string[])[];
  /** String fields that travel in request headers. */
  readonly headerBound: readonly string[];
  /** A mode's cross-field rules, by mode. */
  readonly strategyChecks: ReadonlyMap<string, NonNullable<StrategyFieldSet['check']>>;
  /** Plugin fields a target takes from its parent (`ConfigFieldSet.inherited`), for the pipeline. */
  readonly inherited: readonly string[];
  /** Every field a loaded plugin declared (the generic ones are not in it). */
  readonly declared: ReadonlySet<string>;
  /** Fields refused beside `passthrough: true`: the generic ones, then those plugins declare. */
  readonly notWithPassthrough: readonly string[];
  /** Fields with rules beyond their schema (`ConfigFieldSet.rules`), in the order they were declared. */
  readonly fieldRules: readonly { readonly field: string; readonly rules: FieldRules }[];
}

/** SPEC.md: "A config is valid only when at least one of these property sets is present" (the generic ones). */
const GENERIC_SETS: readonly (readonly string[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['passthrough'],
  // Not in SPEC.md's list, but the same thing under another name: `Authorization` is the api key in bearer form,
  // and a `@slug` provider carries stored credentials the way a virtual key does (SPEC.md recommends slugs).
  ['provider', 'Authorization'],
];
const GENERIC_HEADER_BOUND = ['api_key', 'Authorization'];
const GENERIC_NOT_WITH_PASSTHROUGH = ['targets', 'strategy', 'override_params'];

/** Adds `fields` to `into`; a name declared twice must have the same schema (a provider family shares its fields). */
function merge(into: Record<string, TSchema>, fields: TProperties, owner: string, reserved: ReadonlySet<string>): void {
  for (const [name, schema] of Object.entries(fields)) {
    if (reserved.has(name)) throw new Error(`${owner} declares config field "${name}", which is a generic field of the gateway`);
    const held = into[name];
    if (held && JSON.stringify(held) !== JSON.stringify(schema))
      throw new Error(`${owner} declares config field "${name}" with another schema than a plugin loaded before it`);
    into[name] = schema;
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((f, i) => f === b[i]);
const pushNew = (list: (readonly string[])[], set: readonly string[]) => {
  if (!list.some((s) => sameSet(s, set))) list.push(set);
};

/**
 * The generic property sets with each plugin's placed before the generic set it names (`propertySetsBefore`), in
 * load order; sets that name none (or a set this core does not have) follow the generic ones.
 */
function placeSets(placed: readonly { sets: readonly (readonly string[])[]; before?: string }[]): (readonly string[])[] {
  const before = new Map<string, (readonly string[])[]>();
  const after: (readonly string[])[] = [];
  const names = new Set(GENERIC_SETS.map((set) => set.join('+')));
  for (const { sets, before: name } of placed) {
    let into = after;
    if (name !== undefined && names.has(name)) {
      into = before.get(name) ?? [];
      before.set(name, into);
    }
    for (const set of sets) pushNew(into, set);
  }
  const out: (readonly string[])[] = [];
  for (const set of GENERIC_SETS) {
    for (const own of before.get(set.join('+')) ?? []) pushNew(out, own);
    pushNew(out, set);
  }
  for (const own of after) pushNew(out, own);
  return out;
}

/** Assembles and compiles the config schema and rules for what loaded; throws (naming the plugin) on a conflict. */
export function assembleConfig(sources: FieldSources): LoadedConfig {
  const fields: Record<string, TSchema> = {};
  const strategyFields: Record<string, TSchema> = {};
  const modes: string[] = [];
  const placed: { sets: readonly (readonly string[])[]; before?: string }[] = [];
  const credentialSets: (readonly string[])[] = [];
  const headerBound = new Set(GENERIC_HEADER_BOUND);
  const inherited = new Set<string>();
  const notWithPassthrough = new Set(GENERIC_NOT_WITH_PASSTHROUGH);
  const fieldRules: { field: string; rules: FieldRules }[] = [];
  const strategyChecks = new Map<string, NonNullable<StrategyFieldSet['check']>>();
  const seen = new Set<ConfigFieldSet>();

  const add = (set: ConfigFieldSet, owner: string) => {
    if (seen.has(set)) return; // one declaration shared by several adapters (a provider family)
    seen.add(set);
    merge(fields, set.fields, owner, GENERIC_CONFIG_FIELDS);
    const own = (name: string, as: string) => {
      if (!Object.hasOwn(set.fields, name)) throw new Error(`${owner} declares config field "${name}" ${as} but not among its fields`);
      return name;
    };
    for (const name of set.inherited ?? []) inherited.add(own(name, 'inherited'));
    for (const name of set.notWithPassthrough ?? []) notWithPassthrough.add(own(name, 'not with passthrough'));
    for (const [name, rules] of Object.entries(set.rules ?? {})) if (rules) fieldRules.push({ field: own(name, 'with rules'), rules });
    if (set.propertySets?.length) placed.push({ sets: set.propertySets, before: set.propertySetsBefore });
    for (const s of set.credentialSets ?? []) pushNew(credentialSets, s);
    for (const f of set.headerBound ?? []) headerBound.add(f);
  };
  // Stage plugins' fields before the providers': the order the schema reports violations in (as when they were generic).
  for (const { plugin, fields: set } of sources.plugins ?? []) add(set, `plugin ${plugin}`);
  for (const adapter of sources.providers) if (adapter.targetFields) add(adapter.targetFields, `provider ${adapter.id}`);
  for (const strategy of sources.strategies) {
    modes.push(strategy.mode);
    const own = strategy.strategyFields;
    if (!own) continue;
    merge(strategyFields, own.fields, `strategy ${strategy.mode}`, new Set(['mode', 'on_status_codes']));
    if (own.check) strategyChecks.set(strategy.mode, own.check);
  }

  const propertySets = placeSets(placed);
  for (const s of credentialSets) pushNew(propertySets, ['provider', ...s]);
  return {
    compiled: TypeCompiler.Compile(configSchema({ modes, strategyFields, fields })),
    propertySets,
    credentialSets,
    headerBound: [...headerBound],
    strategyChecks,
    inherited: [...inherited],
    declared: new Set(Object.keys(fields)),
    notWithPassthrough: [...notWithPassthrough],
    fieldRules,
  };
}

const NOTHING_LOADED = assembleConfig({ providers: [], strategies: [] });
const loaded = new Seam<LoadedConfig>(() => clearConfigCache());

/** The config rules in force: those of the gateway set last in this process (nothing loaded otherwise). */
export const loadedConfig = (): LoadedConfig => loaded.current ?? NOTHING_LOADED;

/** Assembles the config for what loaded and puts it in force; returns the function that takes it out again. */
export function useLoadedFields(sources: FieldSources): () => void {
  return loaded.push(assembleConfig(sources));
}
