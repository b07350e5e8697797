/**
 * `default.requiredMetadataKeys` {metadataKeys, operator?=all}: the request's metadata (`x-gateway-metadata`) must
 * have all / any / none of `metadataKeys` (a key counts as present whatever its value, the empty string included).
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { Operator, applyOperator } from '../operator.ts';

export const requiredMetadataKeys = defineCheck({
  name: 'requiredMetadataKeys',
  schema: Type.Object(
    {
      metadataKeys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(Operator),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const operator = p.operator ?? 'all';
    const metadata = ctx.request.metadata;
    const found = p.metadataKeys.filter((k) => Object.hasOwn(metadata, k));
    const missing = p.metadataKeys.filter((k) => !found.includes(k));
    const verdict = applyOperator(operator, found.length, p.metadataKeys.length);
    return {
      verdict,
      data: {
        operator,
        foundKeys: found,
        missingKeys: missing,
        explanation: `${found.length} of ${p.metadataKeys.length} metadata keys present; operator ${operator} ${verdict ? 'passes' : 'fails'}.`,
      },
    };
  },
});
