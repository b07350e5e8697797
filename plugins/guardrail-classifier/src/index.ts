import { guardHostsWith, compileParameters, failedVerdict, invalidParameters, postJson, textOf, urlRule, type CheckResult } from '@gateway/guardrail-kit';
import { definePlugin, type GuardrailCheck, type GuardrailCheckContext, type JsonObject } from '@gateway/sdk';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/** The hosted classifier; `apiEndpoint` replaces it for a self-hosted one. */
export const DEFAULT_API_ENDPOINT = 'https://api.classifier-service.example/v1/classify';
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_THRESHOLD = 0.5;

export const ClassifierParameters = Type.Object(
  {
    /** The whole classify URL (http or https) of a self-hosted classifier; the hosted one when absent. */
    apiEndpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    /** Sent as `Authorization: Bearer …`; never logged, never in data or errors. */
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    /** The check fails when the score is at or above this (0 … 1). */
    threshold: Type.Number({ minimum: 0, maximum: 1, default: DEFAULT_THRESHOLD }),
    timeout: Type.Integer({ minimum: 1, maximum: 600_000, default: DEFAULT_TIMEOUT_MS }),
  },
  { additionalProperties: false },
);
export type ClassifierParameters = Static<typeof ClassifierParameters>;

const parameters = compileParameters(ClassifierParameters, (p) => urlRule('apiEndpoint', p.apiEndpoint));

const Classification = TypeCompiler.Compile(
  Type.Object({ score: Type.Number({ minimum: 0, maximum: 1 }), label: Type.Optional(Type.String()) }),
);

/** A check that asks the classifier's `model` for a score and fails at or above `threshold`. */
export function classifierCheck(id: string, model: string): GuardrailCheck {
  async function run(ctx: GuardrailCheckContext, raw: JsonObject): Promise<CheckResult> {
    const parsed = parameters.parse(raw);
    if (!parsed.ok) return invalidParameters(parsed.errors, { model });
    const p = parsed.value;
    const text = textOf(ctx);
    if (text === '') return { verdict: true, data: { model, threshold: p.threshold, skipped: 'no text to classify' } };
    const call = await postJson({
      service: 'classifier',
      url: new URL(p.apiEndpoint ?? DEFAULT_API_ENDPOINT),
      headers: p.apiKey ? { authorization: `Bearer ${p.apiKey}` } : {},
      body: { model, text },
      timeoutMs: p.timeout,
      signal: ctx.request.signal,
      secrets: [p.apiKey],
    });
    if (!call.ok) return failedVerdict(call.error, { model, threshold: p.threshold });
    if (!Classification.Check(call.json)) {
      return failedVerdict({ kind: 'unreadable', message: 'classifier answer has no "score" between 0 and 1' }, { model, threshold: p.threshold });
    }
    const { score, label } = call.json;
    return {
      verdict: score < p.threshold,
      data: { model, score, threshold: p.threshold, ...(label === undefined ? {} : { label }) },
    };
  }
  return { id, validate: parameters.validate, destination: ['apiEndpoint'], run };
}

export const promptInjectionCheck = classifierCheck('classifier.promptInjection', 'prompt-injection');
export const toxicityCheck = classifierCheck('classifier.toxicity', 'toxicity');

export default definePlugin({
  setup(api) {
    guardHostsWith(api);
    api.guardrail(promptInjectionCheck);
    api.guardrail(toxicityCheck);
  },
});
