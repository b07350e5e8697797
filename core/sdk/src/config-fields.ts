/**
 * Config fields a plugin brings (issue #14): the routing config is assembled at start-up from the generic fields of
 * config.ts and the fields each loaded plugin declares here. A provider declares its target fields on its adapter
 * (`ProviderAdapter.targetFields`), a strategy the fields of the `strategy` object it reads
 * (`Strategy.strategyFields`), any other plugin (a stage) the top-level fields it reads (`PluginApi.configFields`:
 * the response cache's `cache`, the circuit breaker's `cb_config`, the hook engine's hook and guardrail lists). From
 * the same
 * declarations come the closed config schema (compiled once), the integrations' `configurations` schema (derived
 * from the loaded adapters, service `providerAdapters`), which values are masked, sealed and redacted in logs, and
 * which decide where a stored secret may be sent.
 */
import type { Static, TObject, TProperties } from '@sinclair/typebox';

/** The names of a declaration's fields. */
export type FieldName<P extends TProperties> = Extract<keyof P, string>;

/**
 * Fields a plugin adds to the routing config (the root and every target: a target is a config). Each field is
 * optional wherever it appears; its schema says what a value must be (closed objects refuse unknown keys). Field
 * names in the lists below must be names of `fields` (`defineConfigFields` checks it at compile time, the core at
 * start-up).
 */
export interface ConfigFieldSet {
  /** The fields, each a TypeBox schema. A name may be declared by several plugins only with the same schema. */
  readonly fields: TProperties;
  /**
   * Fields holding a credential: masked (`****abcd`) when an integration is read back, sealed apart from a saved
   * config, and redacted from log lines at any depth.
   */
  readonly secret?: readonly string[];
  /**
   * Fields that decide where this plugin's credentials are sent (a host, a region in a host name, an identity to
   * act as). A stored target's value of one of them wins over a request's, and an update that changes one must
   * carry the values of `clearedOnChange` again. `provider` and `custom_host` always count.
   */
  readonly destination?: readonly string[];
  /**
   * Stored values that do not survive a change of a destination field: an update that changes one must enter them
   * again (a masked value sent back, or leaving them out, does not keep them). Default: `secret`.
   */
  readonly clearedOnChange?: readonly string[];
  /**
   * Field sets that, with `provider`, stand for a credential in place of `api_key` (SPEC.md's property sets), e.g.
   * `[['svcA_access_key_id', 'svcA_secret_access_key']]`.
   */
  readonly credentialSets?: readonly (readonly string[])[];
  /** Field sets that make a config valid on their own (SPEC.md's property sets), e.g. `[['cache']]`. */
  readonly propertySets?: readonly (readonly string[])[];
  /**
   * Where `propertySets` are listed in an invalid config's message: before the generic set of this name (`'retry'`,
   * `'provider+Authorization'`), so that SPEC.md's order holds; by default after the generic sets.
   */
  readonly propertySetsBefore?: string;
  /**
   * Fields a target takes from its parent config unless it sets its own (a cache or a circuit breaker set once on a
   * fallback applies to each target under it). Read once at start-up; the pipeline applies them to every target.
   */
  readonly inherited?: readonly string[];
  /** String fields sent in an HTTP header (or signed into one): refused when they hold a character a header cannot. */
  readonly headerBound?: readonly string[];
}

/** A `ConfigFieldSet` whose lists may name only its own fields (what `defineConfigFields` takes). */
export interface TypedConfigFieldSet<P extends TProperties> extends ConfigFieldSet {
  readonly fields: P;
  readonly secret?: readonly FieldName<P>[];
  readonly destination?: readonly FieldName<P>[];
  readonly clearedOnChange?: readonly FieldName<P>[];
  readonly credentialSets?: readonly (readonly FieldName<P>[])[];
  readonly propertySets?: readonly (readonly FieldName<P>[])[];
  readonly headerBound?: readonly FieldName<P>[];
  readonly inherited?: readonly FieldName<P>[];
}

/** One config rule's finding: a path below the config node that holds the field (`['strategy', 'default']`). */
export interface FieldViolation {
  path: readonly (string | number)[];
  reason: string;
}

/**
 * Fields of the `strategy` object a strategy reads beyond `mode` and `on_status_codes`, and the rules across them
 * that a schema cannot say. `check` runs only for a node whose `strategy.mode` is this strategy's.
 */
export interface StrategyFieldSet {
  readonly fields: TProperties;
  /** Violations of one config node using this mode (`strategy` and `targets` as given: not yet known to be valid). */
  check?(strategy: Readonly<Record<string, unknown>>, targets: unknown): FieldViolation[];
}

/** A `StrategyFieldSet` with its fields' types kept (what `defineStrategyFields` takes). */
export interface TypedStrategyFieldSet<P extends TProperties> extends StrategyFieldSet {
  readonly fields: P;
}

/** Identity helpers that keep the field names typed (`secret: ['svcA_secretX']` is a compile error). */
export function defineConfigFields<P extends TProperties>(set: TypedConfigFieldSet<P>): TypedConfigFieldSet<P> {
  return set;
}
export function defineStrategyFields<P extends TProperties>(set: TypedStrategyFieldSet<P>): TypedStrategyFieldSet<P> {
  return set;
}

/**
 * The TypeScript side: a plugin makes its fields part of `GatewayConfig` (and so of `TargetConfig`) by augmenting
 * this interface, from the same declaration:
 *
 *     declare module '@gateway/sdk' { interface PluginConfigFields extends FieldValues<typeof myFields> {} }
 */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by plugins
export interface PluginConfigFields {}
/** Likewise for the `strategy` object (`StrategyFieldValues<typeof conditionalFields>`). */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by plugins
export interface PluginStrategyFields {}

/** The values of a declaration's fields, all optional. */
export type FieldValues<S extends { readonly fields: TProperties }> = Partial<Static<TObject<S['fields']>>>;
