/**
 * The checks "the judged text has between min and max <units>, inclusive" (wordCount, sentenceCount,
 * characterCount): one definition, each check naming its parameters, default maximum and counting rule.
 * Missing text counts as 0.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck, rangeRule } from './check.ts';
import { judgedText } from './text.ts';

/** A bound from the validated parameters (an optional integer by the schema). */
const read = (parameters: object, key: string): number | undefined => (parameters as Record<string, number | undefined>)[key];

export function countRangeCheck<Min extends string, Max extends string>(spec: {
  name: string;
  /** Plural unit for the explanation, e.g. `words`. */
  unit: string;
  minKey: Min;
  maxKey: Max;
  defaultMax: number;
  count(text: string): number;
}) {
  const bound = Type.Optional(Type.Integer({ minimum: 0 }));
  return defineCheck({
    name: spec.name,
    schema: Type.Object({ [spec.minKey]: bound, [spec.maxKey]: bound } as Record<Min | Max, typeof bound>, {
      additionalProperties: false,
    }),
    rules: (p) => rangeRule(read(p, spec.minKey), read(p, spec.maxKey), spec.minKey, spec.maxKey),
    run(ctx, p) {
      const { text, source } = judgedText(ctx);
      const min = read(p, spec.minKey) ?? 0;
      const max = read(p, spec.maxKey) ?? spec.defaultMax;
      const count = spec.count(text ?? '');
      const verdict = count >= min && count <= max;
      return {
        verdict,
        data: {
          source,
          textFound: text !== undefined,
          [spec.name]: count,
          [spec.minKey]: min,
          [spec.maxKey]: max,
          explanation: `The text has ${count} ${spec.unit}, ${verdict ? 'within' : 'outside'} ${min}–${max}.`,
        },
      };
    },
  });
}
