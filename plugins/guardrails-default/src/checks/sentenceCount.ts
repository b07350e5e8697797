/**
 * `default.sentenceCount` {minSentences?=0, maxSentences?=99999}: passes when the judged text has between min and
 * max sentences, inclusive (counting rules in counts.ts). Missing text has 0 sentences.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck, rangeRule } from '../check.ts';
import { judgedText } from '../text.ts';
import { countSentences } from '../counts.ts';

export const sentenceCount = defineCheck({
  name: 'sentenceCount',
  schema: Type.Object(
    {
      minSentences: Type.Optional(Type.Integer({ minimum: 0 })),
      maxSentences: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
  rules: (p) => rangeRule(p.minSentences, p.maxSentences, 'minSentences', 'maxSentences'),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const min = p.minSentences ?? 0;
    const max = p.maxSentences ?? 99_999;
    const count = countSentences(text ?? '');
    const verdict = count >= min && count <= max;
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        sentenceCount: count,
        minSentences: min,
        maxSentences: max,
        explanation: verdict
          ? `The text has ${count} sentences, within ${min}–${max}.`
          : `The text has ${count} sentences, outside ${min}–${max}.`,
      },
    };
  },
});
