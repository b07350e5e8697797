/**
 * `default.endsWith` {suffix}: passes when the judged text ends with `suffix` (case-sensitive), trailing whitespace
 * of the text ignored (a suffix that itself ends in whitespace is also compared with the text as it is). Missing text
 * ends with nothing, so it fails.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { judgedText } from '../text.ts';

export const endsWith = defineCheck({
  name: 'endsWith',
  schema: Type.Object({ suffix: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const t = text ?? '';
    const verdict = t.endsWith(p.suffix) || t.trimEnd().endsWith(p.suffix);
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        suffix: p.suffix,
        explanation: verdict ? 'The text ends with the suffix.' : 'The text does not end with the suffix.',
      },
    };
  },
});
