/**
 * `default.allLowercase` {} (also `default.alllowercase`, Portkey's spelling): passes when the judged text has no
 * uppercase or titlecase letter (Unicode categories Lu, Lt). Text without letters, and missing text, pass.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { judgedText } from '../text.ts';

const UPPER = /[\p{Lu}\p{Lt}]/u;

export const allLowercase = defineCheck({
  name: 'allLowercase',
  schema: Type.Object({}, { additionalProperties: false }),
  run(ctx) {
    const { text, source } = judgedText(ctx);
    const verdict = !UPPER.test(text ?? '');
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        explanation: verdict ? 'The text has no uppercase letter.' : 'The text has uppercase letters.',
      },
    };
  },
});
