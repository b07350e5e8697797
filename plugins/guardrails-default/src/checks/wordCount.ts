/**
 * `default.wordCount` {minWords?=0, maxWords?=99999}: passes when the judged text has between min and
 * max words, inclusive (counting rules in counts.ts). Missing text has 0 words.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck, rangeRule } from '../check.ts';
import { judgedText } from '../text.ts';
import { countWords } from '../counts.ts';

export const wordCount = defineCheck({
  name: 'wordCount',
  schema: Type.Object(
    {
      minWords: Type.Optional(Type.Integer({ minimum: 0 })),
      maxWords: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
  rules: (p) => rangeRule(p.minWords, p.maxWords, 'minWords', 'maxWords'),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const min = p.minWords ?? 0;
    const max = p.maxWords ?? 99_999;
    const count = countWords(text ?? '');
    const verdict = count >= min && count <= max;
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        wordCount: count,
        minWords: min,
        maxWords: max,
        explanation: verdict
          ? `The text has ${count} words, within ${min}–${max}.`
          : `The text has ${count} words, outside ${min}–${max}.`,
      },
    };
  },
});
