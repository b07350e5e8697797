/**
 * `default.characterCount` {minCharacters?=0, maxCharacters?=9999999}: passes when the judged text has between min and
 * max characters, inclusive (counting rules in counts.ts). Missing text has 0 characters.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck, rangeRule } from '../check.ts';
import { judgedText } from '../text.ts';
import { countCharacters } from '../counts.ts';

export const characterCount = defineCheck({
  name: 'characterCount',
  schema: Type.Object(
    {
      minCharacters: Type.Optional(Type.Integer({ minimum: 0 })),
      maxCharacters: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
  rules: (p) => rangeRule(p.minCharacters, p.maxCharacters, 'minCharacters', 'maxCharacters'),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const min = p.minCharacters ?? 0;
    const max = p.maxCharacters ?? 9_999_999;
    const count = countCharacters(text ?? '');
    const verdict = count >= min && count <= max;
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        characterCount: count,
        minCharacters: min,
        maxCharacters: max,
        explanation: verdict
          ? `The text has ${count} characters, within ${min}–${max}.`
          : `The text has ${count} characters, outside ${min}–${max}.`,
      },
    };
  },
});
