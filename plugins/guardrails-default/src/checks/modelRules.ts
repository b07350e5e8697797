/**
 * `default.modelRules` {rules: {defaults?, metadata?}, not?}: allowed models chosen by the request's metadata, as in
 * Portkey.
 *
 * `rules.metadata` maps a metadata key to a map from metadata value to models, e.g.
 * `{"team": {"research": ["gpt-4o"], "support": ["gpt-4o-mini"]}}`. Every rule whose key and value match the
 * request's metadata (`x-gateway-metadata`) contributes its models; when none matches, `rules.defaults` applies.
 * The check passes when the request's model (as in modelWhitelist, `@provider/` prefix optional) is allowed, or, with
 * `not: true`, when it is not. No model in the request, or no allowed model at all, fails.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { requestModel } from '../text.ts';
import { modelNames } from './modelWhitelist.ts';

const Models = Type.Array(Type.String({ minLength: 1 }));

export const modelRules = defineCheck({
  name: 'modelRules',
  schema: Type.Object(
    {
      rules: Type.Object(
        {
          defaults: Type.Optional(Models),
          metadata: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Models))),
        },
        { additionalProperties: false },
      ),
      not: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  rules(p) {
    const hasDefaults = (p.rules.defaults?.length ?? 0) > 0;
    const hasMetadata = Object.keys(p.rules.metadata ?? {}).length > 0;
    return hasDefaults || hasMetadata ? [] : ['rules: needs defaults or metadata rules'];
  },
  run(ctx, p) {
    const not = p.not ?? false;
    const model = requestModel(ctx);
    if (model === undefined) return { verdict: false, data: { not, explanation: 'The request names no model.' } };
    const allowed = new Set<string>();
    const matchedRules: string[] = [];
    for (const [key, byValue] of Object.entries(p.rules.metadata ?? {})) {
      const value = ctx.request.metadata[key];
      if (value === undefined || !Object.hasOwn(byValue, value)) continue;
      matchedRules.push(`${key}:${value}`);
      for (const m of byValue[value] ?? []) allowed.add(m);
    }
    const usingDefaults = matchedRules.length === 0;
    if (usingDefaults) for (const m of p.rules.defaults ?? []) allowed.add(m);
    if (allowed.size === 0)
      return {
        verdict: false,
        data: { model, not, matchedRules, explanation: 'No rule matches this request and there are no default models.' },
      };
    const listed = modelNames(model).some((name) => allowed.has(name));
    const verdict = not ? !listed : listed;
    return {
      verdict,
      data: {
        model,
        not,
        matchedRules,
        usingDefaults,
        allowedModels: [...allowed],
        explanation: `Model "${model}" is ${listed ? '' : 'not '}allowed by ${usingDefaults ? 'the default models' : `rules ${matchedRules.join(', ')}`}.`,
      },
    };
  },
});
