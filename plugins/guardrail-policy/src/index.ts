import { guardHostsWith, compileParameters, failedVerdict, invalidParameters, postJson, textOf, urlRule, type CheckResult } from '@gateway/guardrail-kit';
import { definePlugin, type GuardrailCheck, type GuardrailCheckContext, type JsonObject } from '@gateway/sdk';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/** Where the policy service lives unless `baseURL` says otherwise. */
export const DEFAULT_BASE_URL = 'https://api.policy-service.example';
/** SPEC.md: "Policy guardrail timeout: default 10000 ms". */
export const DEFAULT_TIMEOUT_MS = 10_000;

export const PolicyParameters = Type.Object(
  {
    /** The policy to evaluate against (required). */
    policyId: Type.String({ minLength: 1, maxLength: 256 }),
    /** Milliseconds to wait for the decision. */
    timeout: Type.Integer({ minimum: 1, maximum: 600_000, default: DEFAULT_TIMEOUT_MS }),
    /** Sent as `Authorization: Bearer …`; never logged, never in data or errors. */
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    /** The service's base URL (http or https), e.g. a self-hosted deployment. */
    baseURL: Type.String({ minLength: 1, default: DEFAULT_BASE_URL }),
  },
  { additionalProperties: false },
);
export type PolicyParameters = Static<typeof PolicyParameters>;

const parameters = compileParameters(PolicyParameters, (p) => urlRule('baseURL', p.baseURL));

/** The service's answer (README.md). Extra fields are allowed and ignored. */
const Decision = TypeCompiler.Compile(
  Type.Object({
    decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
    reasons: Type.Optional(
      Type.Array(Type.Object({ code: Type.String(), message: Type.Optional(Type.String()) })),
    ),
    evaluation_id: Type.Optional(Type.String()),
  }),
);

export interface PolicyReason {
  code: string;
  message?: string;
}

function evaluateUrl(baseURL: string, policyId: string): URL {
  return new URL(`${baseURL.replace(/\/+$/, '')}/v1/policies/${encodeURIComponent(policyId)}/evaluate`);
}

async function run(ctx: GuardrailCheckContext, raw: JsonObject): Promise<CheckResult> {
  const parsed = parameters.parse(raw);
  if (!parsed.ok) return invalidParameters(parsed.errors, { phase: ctx.phase });
  const p = parsed.value;
  const about = { policyId: p.policyId, phase: ctx.phase };
  const model = ctx.request.body?.model;
  const call = await postJson({
    service: 'policy service',
    url: evaluateUrl(p.baseURL, p.policyId),
    headers: p.apiKey ? { authorization: `Bearer ${p.apiKey}` } : {},
    body: {
      phase: ctx.phase,
      text: textOf(ctx),
      metadata: ctx.request.metadata,
      request: {
        trace_id: ctx.request.traceId,
        endpoint: ctx.request.endpoint,
        ...(typeof model === 'string' ? { model } : {}),
      },
    },
    timeoutMs: p.timeout,
    signal: ctx.request.signal,
    secrets: [p.apiKey],
  });
  if (!call.ok) return failedVerdict(call.error, about);
  if (!Decision.Check(call.json)) {
    return failedVerdict({ kind: 'unreadable', message: 'policy service answer has no valid "decision" (allow or deny)' }, about);
  }
  const answer = call.json;
  return {
    verdict: answer.decision === 'allow',
    data: {
      ...about,
      decision: answer.decision,
      reasons: (answer.reasons ?? []).map((r): PolicyReason => (r.message === undefined ? { code: r.code } : { code: r.code, message: r.message })),
      ...(answer.evaluation_id === undefined ? {} : { evaluationId: answer.evaluation_id }),
    },
  };
}

/** `policy.check`: works on the request (phase `input`) and on the answer (phase `output`). */
export const policyCheck: GuardrailCheck = {
  id: 'policy.check',
  validate: parameters.validate,
  destination: ['baseURL'],
  run,
};

export default definePlugin({
  setup(api) {
    guardHostsWith(api);
    api.guardrail(policyCheck);
  },
});
