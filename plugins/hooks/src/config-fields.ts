/**
 * The config fields this plugin reads (config-fields.ts in the SDK, SPEC.md "Hooks", "Guardrail entries"):
 * `before_request_hooks`, `after_request_hooks`, `input_guardrails`, `output_guardrails`. Each makes a config valid
 * alone. A target takes its parent's (config validation refuses them below the root: hooks run once per request).
 * The checks they name, and saved guardrail ids, are checked by this plugin's field rules (config-rules.ts) against
 * the guardrail registry, when guardrails are on.
 */
import { defineConfigFields, type FieldValues, FreeObject } from '@gateway/sdk';
import { type Static, type TSchema, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
const opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

const Feedback = Type.Object({ value: opt(Type.Number()), weight: opt(Type.Number()), metadata: opt(FreeObject) }, closed);
/** on_fail / on_success; `deny` exists only where the spec allows it. */
const Outcome = Type.Object({ feedback: opt(Feedback) }, closed);
const OutcomeWithDeny = Type.Object({ feedback: opt(Feedback), deny: opt(Type.Boolean()) }, closed);

const HookCheck = Type.Object({ id: Type.String(), parameters: FreeObject }, closed);
const hookFields = { id: Type.String(), type: opt(Type.String()), checks: opt(Type.Array(HookCheck)) };
const BeforeRequestHook = Type.Object({ ...hookFields, on_fail: opt(OutcomeWithDeny), on_success: opt(OutcomeWithDeny) }, closed);
const AfterRequestHook = Type.Object({ ...hookFields, async: opt(Type.Boolean()), on_fail: opt(Outcome), on_success: opt(Outcome) }, closed);

/** A guardrail entry: a saved guardrail id, or inline checks keyed by check id (each value = its parameters). */
const guardrailEntry = <O extends TSchema>(outcome: O) =>
  Type.Union([
    Type.String(),
    Type.Object(
      { id: opt(Type.String()), deny: opt(Type.Boolean()), async: opt(Type.Boolean()), on_fail: opt(outcome), on_success: opt(outcome) },
      { additionalProperties: FreeObject },
    ),
  ]);

export const hookConfigFields = defineConfigFields({
  fields: {
    before_request_hooks: Type.Array(BeforeRequestHook),
    after_request_hooks: Type.Array(AfterRequestHook),
    input_guardrails: Type.Array(guardrailEntry(Outcome)),
    output_guardrails: Type.Array(guardrailEntry(OutcomeWithDeny)),
  },
  // Listed where SPEC.md lists them in an invalid config's message.
  propertySets: [['after_request_hooks'], ['before_request_hooks'], ['input_guardrails'], ['output_guardrails']],
  propertySetsBefore: 'passthrough',
  inherited: ['before_request_hooks', 'after_request_hooks', 'input_guardrails', 'output_guardrails'],
  // A passthrough request is forwarded as sent: no guardrail would see it.
  notWithPassthrough: ['input_guardrails', 'output_guardrails'],
});

export type BeforeRequestHookConfig = Static<typeof BeforeRequestHook>;
export type AfterRequestHookConfig = Static<typeof AfterRequestHook>;

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof hookConfigFields> {}
}
