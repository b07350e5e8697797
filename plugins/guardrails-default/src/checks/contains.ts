/**
 * `default.contains` {words, operator?=any}: passes when the judged text contains any / all / none of `words`.
 * Matching is a case-sensitive substring test, as in Portkey ("cat" is found in "concatenate"; use regexMatch with
 * `\bcat\b` or `/cat/i` for words or case-insensitive matching). Missing text contains nothing.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { Operator, applyOperator } from '../operator.ts';
import { judgedText } from '../text.ts';

export const contains = defineCheck({
  name: 'contains',
  schema: Type.Object(
    {
      words: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(Operator),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const operator = p.operator ?? 'any';
    const haystack = text ?? '';
    const found = p.words.filter((w) => haystack.includes(w));
    const verdict = applyOperator(operator, found.length, p.words.length);
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        operator,
        foundWords: found,
        missingWords: p.words.filter((w) => !found.includes(w)),
        explanation: `${found.length} of ${p.words.length} words found; operator ${operator} ${verdict ? 'passes' : 'fails'}.`,
      },
    };
  },
});
