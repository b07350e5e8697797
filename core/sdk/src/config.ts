/**
 * The routing config (SPEC.md "Config object") as a TypeBox schema. A target is itself a config, so one recursive
 * schema serves both. Every object is closed (`additionalProperties: false`) except the places the spec leaves
 * free-form: payload params, conditional queries, check parameters, feedback metadata, service-account JSON.
 * Cross-field rules (property sets, strategy/targets pairing, passthrough exclusivity…) live in `@gateway/config`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

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

/** A JSON object whose contents the gateway does not constrain. */
const FreeObject = Type.Record(Type.String(), Type.Unknown());
/**
 * Statuses that trigger a retry, a fallback or a circuit failure: errors only. Retrying on a success would call the
 * provider again for an answer already given (and bill it); a redirect or an informational status is never final.
 */
const StatusCodes = Type.Array(Type.Integer({ minimum: 400, maximum: 599 }), { maxItems: 200 });

const Feedback = Type.Object(
  { value: opt(Type.Number()), weight: opt(Type.Number()), metadata: opt(FreeObject) },
  closed,
);
/** on_fail / on_success; `deny` exists only where the spec allows it. */
const Outcome = Type.Object({ feedback: opt(Feedback) }, closed);
const OutcomeWithDeny = Type.Object({ feedback: opt(Feedback), deny: opt(Type.Boolean()) }, closed);

const HookCheck = Type.Object({ id: Type.String(), parameters: FreeObject }, closed);
const hookFields = { id: Type.String(), type: opt(Type.String()), checks: opt(Type.Array(HookCheck)) };
const BeforeRequestHook = Type.Object(
  { ...hookFields, on_fail: opt(OutcomeWithDeny), on_success: opt(OutcomeWithDeny) },
  closed,
);
const AfterRequestHook = Type.Object(
  { ...hookFields, async: opt(Type.Boolean()), on_fail: opt(Outcome), on_success: opt(Outcome) },
  closed,
);

/** A guardrail entry: a saved guardrail id, or inline checks keyed by check id (each value = its parameters). */
const guardrailEntry = <O extends TSchema>(outcome: O) =>
  Type.Union([
    Type.String(),
    Type.Object(
      {
        id: opt(Type.String()),
        deny: opt(Type.Boolean()),
        async: opt(Type.Boolean()),
        on_fail: opt(outcome),
        on_success: opt(outcome),
      },
      { additionalProperties: FreeObject },
    ),
  ]);

const Strategy = Type.Object(
  {
    mode: Type.Union([
      Type.Literal('single'),
      Type.Literal('loadbalance'),
      Type.Literal('fallback'),
      Type.Literal('conditional'),
    ]),
    conditions: opt(Type.Array(Type.Object({ query: FreeObject, then: Type.String() }, closed))),
    default: opt(Type.String()),
    on_status_codes: opt(StatusCodes),
  },
  closed,
);

const Cache = Type.Object(
  {
    mode: Type.Union([Type.Literal('simple'), Type.Literal('semantic')]),
    /** Seconds (INTERFACE.md). */
    max_age: opt(Type.Integer({ minimum: 0 })),
  },
  closed,
);

const Retry = Type.Object(
  {
    /** Retries, not calls: a target is called at most 1 + attempts times. */
    attempts: Type.Integer({ minimum: 0, maximum: ROUTING_LIMITS.maxRetryAttempts }),
    on_status_codes: opt(StatusCodes),
    use_retry_after_headers: opt(Type.Boolean()),
  },
  closed,
);

const CircuitBreaker = Type.Object(
  {
    failure_threshold: Type.Number({ minimum: 1 }),
    /** Milliseconds. */
    cooldown_interval: Type.Number({ minimum: 30000 }),
    failure_status_codes: opt(StatusCodes),
  },
  closed,
);

const Deployment = Type.Object(
  {
    deployment_id: Type.String(),
    alias: Type.String(),
    api_version: Type.String(),
    is_default: opt(Type.Boolean()),
  },
  closed,
);

const Str = () => opt(Type.String());

export const ConfigSchema = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        strategy: opt(Strategy),
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
        cache: opt(Cache),
        retry: opt(Retry),
        cb_config: opt(CircuitBreaker),
        weight: opt(Type.Number({ minimum: 0 })),
        on_status_codes: opt(StatusCodes),
        custom_host: Str(),
        passthrough: opt(Type.Boolean()),
        forward_headers: opt(Type.Array(Type.String())),
        resource_name: Str(),
        deployment_id: Str(),
        api_version: Str(),
        deployments: opt(Type.Array(Deployment)),
        svcA_access_key_id: Str(),
        svcA_secret_access_key: Str(),
        svcA_region: Str(),
        svcA_session_token: Str(),
        svcD_organization: Str(),
        svcD_project: Str(),
        svcC_project_id: Str(),
        svcC_region: Str(),
        svcC_service_account_json: opt(FreeObject),
        svcB_region: Str(),
        svcB_deployment_name: Str(),
        svcB_endpoint_name: Str(),
        svcB_api_version: Str(),
        svcB_deployment_type: opt(Type.Union([Type.Literal('serverless'), Type.Literal('managed')])),
        svcB_entra_scope: Str(),
        // Microsoft Entra ID service principal (client-credentials grant) for the Azure-style provider.
        svcB_entra_tenant_id: Str(),
        svcB_entra_client_id: Str(),
        svcB_entra_client_secret: Str(),
        svcB_resource_name: Str(),
        svcB_deployment_id: Str(),
        svcB_model_name: Str(),
        Authorization: Str(),
        before_request_hooks: opt(Type.Array(BeforeRequestHook)),
        after_request_hooks: opt(Type.Array(AfterRequestHook)),
        input_guardrails: opt(Type.Array(guardrailEntry(Outcome))),
        output_guardrails: opt(Type.Array(guardrailEntry(OutcomeWithDeny))),
      },
      closed,
    ),
  { $id: 'GatewayConfig' },
);

export type GatewayConfig = Static<typeof ConfigSchema>;
export type TargetConfig = GatewayConfig;
export type ConfigStrategy = Static<typeof Strategy>;
export type BeforeRequestHookConfig = Static<typeof BeforeRequestHook>;
export type AfterRequestHookConfig = Static<typeof AfterRequestHook>;
