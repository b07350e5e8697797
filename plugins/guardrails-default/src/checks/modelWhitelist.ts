/**
 * `default.modelWhitelist` {models, not?}: passes when the request's model is in `models`, or, with `not: true`, when
 * it is not (a block list). The model is the request body's `model`, else the config's `override_params.model`; a
 * model written `@provider/name` also matches an entry `name`. A request without a model fails in both modes (there is
 * nothing to judge). Works in both phases (it always judges the request's model).
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { requestModel } from '../text.ts';

/** The names a model answers to: as written, and without an `@provider/` prefix. */
export function modelNames(model: string): string[] {
  if (model.startsWith('@')) {
    const slash = model.indexOf('/');
    if (slash > 1 && slash < model.length - 1) return [model, model.slice(slash + 1)];
  }
  return [model];
}

export const modelWhitelist = defineCheck({
  name: 'modelWhitelist',
  schema: Type.Object(
    {
      models: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      not: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const not = p.not ?? false;
    const model = requestModel(ctx);
    if (model === undefined)
      return { verdict: false, data: { not, explanation: 'The request names no model.' } };
    const listed = modelNames(model).some((name) => p.models.includes(name));
    const verdict = not ? !listed : listed;
    return {
      verdict,
      data: {
        model,
        not,
        listed,
        explanation: listed
          ? `Model "${model}" is in the list${not ? ' of blocked models' : ''}.`
          : `Model "${model}" is not in the list${not ? ' of blocked models' : ' of allowed models'}.`,
      },
    };
  },
});
