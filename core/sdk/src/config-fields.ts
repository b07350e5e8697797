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
import type { SavedGuardrail } from './services.ts';

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
  /**
   * Fields refused beside `passthrough: true` (a passthrough request is forwarded as sent, so nothing would apply
   * them), as `targets`, `strategy` and `override_params` are.
   */
  readonly notWithPassthrough?: readonly string[];
  /** What a field needs beyond its schema (its own check, root only, what it names for the sender), by field name. */
  readonly rules?: { readonly [field: string]: FieldRules | undefined };
}

/** A plugin's `api.configFields` declaration, with the plugin that made it (service `pluginConfigFields`). */
export interface DeclaredConfigFields {
  readonly plugin: string;
  readonly fields: ConfigFieldSet;
}

/** What a field's rules may ask of the gateway about the config being checked. */
export interface FieldContext {
  /**
   * A saved guardrail as the config's sender may use it (their organisation's and workspace's): undefined for any
   * other id, and for every id when the config is checked without a sender. Absent when no guardrail store is loaded.
   */
  readonly savedGuardrail?: (id: string) => SavedGuardrail | undefined;
}

/**
 * A declared field's rules beyond its schema, applied by the gateway's config validation (after the schema, in the
 * order the fields were declared), so every `invalid_config` comes from one place. Validation runs once per distinct
 * header value (per sender with `perSender`) and once per stored config, never per request.
 */
export interface FieldRules {
  /**
   * Violations of the field's value, their paths below the field (`{ path: [0, 'checks'], reason }` is reported at
   * `field[0].checks`). Runs wherever the field is set (the root only, with `rootOnly`); the value may have failed the
   * schema, so check its type before use.
   */
  check?(value: unknown, context: FieldContext): FieldViolation[];
  /** The field applies to the whole request: on a target (at any depth) it is refused, with this reason. */
  rootOnly?: string;
  /**
   * Whether this value means something different to each sender (it names saved guardrails). A config holding one
   * is validated, and `resolve`d, once per header value and sender, and cached so.
   */
  perSender?(value: unknown): boolean;
  /** The value with what it names put in for the config's sender (a valid config, with a sender). */
  resolve?(value: unknown, context: FieldContext): unknown;
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
  readonly notWithPassthrough?: readonly FieldName<P>[];
  readonly rules?: { readonly [K in FieldName<P>]?: FieldRules };
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
