/**
 * The routing config (SPEC.md "Config object"): its generic fields as TypeBox schemas. The closed schema a config is
 * checked against is assembled at start-up (`configSchema`) from these and the fields of the loaded plugins
 * (config-fields.ts): a provider's credential fields, a strategy's fields, the cache's, the circuit breaker's and the
 * hook engine's fields. A target is itself a config, so one
 * recursive schema serves both. Every object is closed (`additionalProperties: false`) except the places the spec
 * leaves free-form: payload params, check parameters, feedback metadata. Cross-field rules (property sets,
 * strategy/targets pairing, passthrough exclusivity…) live in `@gateway/config`.
 */
import { type Static, type TLiteral, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { PluginConfigFields, PluginStrategyFields } from './config-fields.ts';

const closed = { additionalProperties: false } as const;
const opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

/**
 * Bounds on how much work one config may ask of the gateway (docs/security.md, "Limits on input"). A config is
 * refused past them (`@gateway/config`); the engine also stops at `maxAttemptsPerRequest` whatever the config.
 */
export const ROUTING_LIMITS = {
  /** `retry.attempts`: retries per target (a target is called at most 1 + attempts times). */
  maxRetryAttempts: 5,
  /** Items of one `targets` array. */
  maxTargetsPerLevel: 50,
  /** Targets of a whole config, every nesting level counted. */
  maxTargets: 250,
  /** Provider calls one request may lead to, retries and fallbacks included, in the worst case. */
  maxAttemptsPerRequest: 50,
} as const;

/**
 * Statuses that trigger a retry, a fallback or a circuit failure: errors only. Retrying on a success would call the
 * provider again for an answer already given (and bill it); a redirect or an informational status is never final.
 * Exported for plugins whose fields list statuses (the circuit breaker's `failure_status_codes`).
 */
export const StatusCodes = Type.Array(Type.Integer({ minimum: 400, maximum: 599 }), { maxItems: 200 });

/** A JSON object whose contents the gateway does not constrain (payload params; a plugin's free-form parameters). */
export const FreeObject = Type.Record(Type.String(), Type.Unknown());

const Retry = Type.Object(
  {
    /** Retries, not calls: a target is called at most 1 + attempts times. */
    attempts: Type.Integer({ minimum: 0, maximum: ROUTING_LIMITS.maxRetryAttempts }),
    on_status_codes: opt(StatusCodes),
    use_retry_after_headers: opt(Type.Boolean()),
  },
  closed,
);

/** The generic `strategy` object; `mode` is one of the loaded strategies, the other fields theirs. */
const strategyObject = (modes: readonly string[], fields: TProperties) =>
  Type.Object(
    {
      mode: Type.Union(modes.map((mode): TLiteral<string> => Type.Literal(mode))),
      ...optional(fields),
      on_status_codes: opt(StatusCodes),
    },
    closed,
  );

/** Every declared field is optional wherever it appears. */
function optional(fields: TProperties): TProperties {
  return Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, opt(schema)]));
}

const Str = () => opt(Type.String());

/** The fields every config may carry whatever plugins are loaded, in the order violations are reported. */
const genericFields = (Self: TSchema, strategy: TSchema) => ({
  strategy: opt(strategy),
  targets: opt(Type.Array(Self)),
  name: Str(),
  provider: Str(),
  api_key: Str(),
  virtual_key: Str(),
  prompt_id: Str(),
  strict_wire_compliance: opt(Type.Boolean()),
  override_params: opt(FreeObject),
  default_params: opt(FreeObject),
  drop_params: opt(Type.Array(Type.String())),
  /** Milliseconds. */
  request_timeout: opt(Type.Integer({ minimum: 1 })),
  /** Milliseconds from the call to a stream's first content event; past it the attempt fails before a byte is sent. */
  first_token_timeout: opt(Type.Integer({ minimum: 1 })),
  /** Milliseconds of silence after which a started stream counts as broken (and is continued where it can be). */
  stream_idle_timeout: opt(Type.Integer({ minimum: 1 })),
  retry: opt(Retry),
  weight: opt(Type.Number({ minimum: 0 })),
  on_status_codes: opt(StatusCodes),
  custom_host: Str(),
  passthrough: opt(Type.Boolean()),
  forward_headers: opt(Type.Array(Type.String())),
  Authorization: Str(),
});

/** What the loaded plugins add to the config (config-fields.ts), merged by the core at start-up. */
export interface ConfigSchemaParts {
  /** The registered strategy modes, in registration order (the order an unknown mode's message lists them). */
  modes: readonly string[];
  /** The `strategy` object's fields beyond `mode` and `on_status_codes`. */
  strategyFields: TProperties;
  /** Top-level fields of the plugins, in the order they are listed (after the generic ones). */
  fields: TProperties;
}

/** The closed config schema for what loaded: generic fields first, then the plugins' in load order. */
export function configSchema(parts: ConfigSchemaParts) {
  const strategy = strategyObject(parts.modes, parts.strategyFields);
  return Type.Recursive((Self) => Type.Object({ ...genericFields(Self, strategy), ...optional(parts.fields) }, closed), {
    $id: 'GatewayConfig',
  });
}

/** The names of the generic fields (a plugin may not declare one of them). */
export const GENERIC_CONFIG_FIELDS: ReadonlySet<string> = new Set(Object.keys(genericFields(Type.Unknown(), Type.Unknown())));

const TypedGenerics = Type.Object(genericFields(Type.Unknown(), strategyObject(['single'], {})));
type Generic = Static<typeof TypedGenerics>;

/** The `strategy` object: `mode` names a loaded strategy (`single`, `loadbalance`, `fallback`, `conditional`, …). */
export interface ConfigStrategy extends PluginStrategyFields {
  mode: string;
  on_status_codes?: number[];
}

/** A routing config as validated: the generic fields, and those of the loaded plugins (`PluginConfigFields`). */
export interface GatewayConfig extends Omit<Generic, 'targets' | 'strategy'>, PluginConfigFields {
  strategy?: ConfigStrategy;
  targets?: GatewayConfig[];
}
export type TargetConfig = GatewayConfig;
