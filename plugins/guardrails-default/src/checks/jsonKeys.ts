/**
 * `default.jsonKeys` {keys, operator?=any}: the judged text must hold a JSON object (found as in json.ts) whose
 * top-level keys include any / all / none of `keys`. No JSON object in the text fails `any` and `all` and passes
 * `none` (none of the keys is present).
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { judgedText } from '../text.ts';
import { findJson } from '../json.ts';
import { Operator, applyOperator } from '../operator.ts';

export const jsonKeys = defineCheck({
  name: 'jsonKeys',
  schema: Type.Object(
    {
      keys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(Operator),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const operator = p.operator ?? 'any';
    const found = findJson(text);
    const object =
      found && typeof found.value === 'object' && found.value !== null && !Array.isArray(found.value) ? found.value : undefined;
    const present = object ? p.keys.filter((k) => Object.hasOwn(object, k)) : [];
    const missing = p.keys.filter((k) => !present.includes(k));
    const verdict = applyOperator(operator, present.length, p.keys.length);
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        jsonFound: object !== undefined,
        operator,
        presentKeys: present,
        missingKeys: missing,
        explanation: `${present.length} of ${p.keys.length} keys present; operator ${operator} ${verdict ? 'passes' : 'fails'}.`,
      },
    };
  },
});
