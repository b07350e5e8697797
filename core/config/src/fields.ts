/**
 * The config as the loaded plugins make it (issue #14): the generic fields of `@gateway/sdk` and every field a
 * provider, a strategy or another plugin declares (config-fields.ts in the SDK), assembled and compiled once at
 * start-up (`useLoadedFields`), never per request. Until a gateway sets it, no plugin is loaded: the generic fields
 * only, and no strategy mode.
 */
import {
  type ConfigFieldSet,
  configSchema,
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
  /** Top-level fields of plugins that are neither providers nor strategies, in load order. */
  other?: Iterable<ConfigFieldSet>;
}

/** The rules that depend on what loaded, read by validate.ts and rules.ts. */
export interface LoadedConfig {
  readonly compiled: TypeCheck<TSchema>;
  /** SPEC.md's property sets: generic ones, then the plugins' (provider credential sets with `provider`). */
  readonly propertySets: readonly (readonly string[])[];
  /** Credential sets (without `provider`) that stand in for `api_key`. */
  readonly credentialSets: readonly (readonly string[])[];
  /** String fields that travel in request headers. */
  readonly headerBound: readonly string[];
  /** A mode's cross-field rules, by mode. */
  readonly strategyChecks: ReadonlyMap<string, NonNullable<StrategyFieldSet['check']>>;
}

/** SPEC.md: "A config is valid only when at least one of these property sets is present" (the generic ones). */
const GENERIC_SETS: readonly (readonly string[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
  ['passthrough'],
  // Not in SPEC.md's list, but the same thing under another name: `Authorization` is the api key in bearer form,
  // and a `@slug` provider carries stored credentials the way a virtual key does (SPEC.md recommends slugs).
  ['provider', 'Authorization'],
];
const GENERIC_HEADER_BOUND = ['api_key', 'Authorization'];

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

const pushNew = (list: (readonly string[])[], set: readonly string[]) => {
  if (!list.some((s) => s.length === set.length && s.every((f, i) => f === set[i]))) list.push(set);
};

/** Assembles and compiles the config schema and rules for what loaded; throws (naming the plugin) on a conflict. */
export function assembleConfig(sources: FieldSources): LoadedConfig {
  const fields: Record<string, TSchema> = {};
  const strategyFields: Record<string, TSchema> = {};
  const modes: string[] = [];
  const propertySets: (readonly string[])[] = [...GENERIC_SETS];
  const credentialSets: (readonly string[])[] = [];
  const headerBound = new Set(GENERIC_HEADER_BOUND);
  const strategyChecks = new Map<string, NonNullable<StrategyFieldSet['check']>>();
  const seen = new Set<ConfigFieldSet>();

  const add = (set: ConfigFieldSet, owner: string) => {
    if (seen.has(set)) return; // one declaration shared by several adapters (a provider family)
    seen.add(set);
    merge(fields, set.fields, owner, GENERIC_CONFIG_FIELDS);
    for (const s of set.credentialSets ?? []) {
      pushNew(credentialSets, s);
      pushNew(propertySets, ['provider', ...s]);
    }
    for (const s of set.propertySets ?? []) pushNew(propertySets, s);
    for (const f of set.headerBound ?? []) headerBound.add(f);
  };
  for (const adapter of sources.providers) if (adapter.targetFields) add(adapter.targetFields, `provider ${adapter.id}`);
  for (const set of sources.other ?? []) add(set, 'a plugin');
  for (const strategy of sources.strategies) {
    modes.push(strategy.mode);
    const own = strategy.strategyFields;
    if (!own) continue;
    merge(strategyFields, own.fields, `strategy ${strategy.mode}`, new Set(['mode', 'on_status_codes']));
    if (own.check) strategyChecks.set(strategy.mode, own.check);
  }

  return {
    compiled: TypeCompiler.Compile(configSchema({ modes, strategyFields, fields })),
    propertySets,
    credentialSets,
    headerBound: [...headerBound],
    strategyChecks,
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
