/**
 * `default.allUppercase` {} (also `default.alluppercase`, Portkey's spelling): passes when the judged text has no
 * lowercase letter (Unicode category Ll). Digits, punctuation and uncased scripts do not count either way, so text
 * without letters, and missing text, pass.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { judgedText } from '../text.ts';

const LOWER = /\p{Ll}/u;

export const allUppercase = defineCheck({
  name: 'allUppercase',
  schema: Type.Object({}, { additionalProperties: false }),
  run(ctx) {
    const { text, source } = judgedText(ctx);
    const verdict = !LOWER.test(text ?? '');
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        explanation: verdict ? 'The text has no lowercase letter.' : 'The text has lowercase letters.',
      },
    };
  },
});
