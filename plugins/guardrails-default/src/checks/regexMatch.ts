/**
 * `default.regexMatch` {rule, not?}: passes when the judged text matches `rule` (anywhere; anchor with `^…$`), or,
 * with `not: true`, when it does not. Missing text counts as the empty string. The rule runs on re2js (linear time,
 * RE2 syntax; `/…/i` literals accepted), see regex.ts.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { compileRegex, regexRule } from '../regex.ts';
import { judgedText } from '../text.ts';

export const regexMatch = defineCheck({
  name: 'regexMatch',
  schema: Type.Object(
    {
      rule: Type.String({ minLength: 1 }),
      not: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  rules: (p) => regexRule(p.rule, 'rule'),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const matcher = compileRegex(p.rule).matcher(text ?? '');
    const matched = matcher.find();
    const not = p.not ?? false;
    const verdict = not ? !matched : matched;
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        matched,
        not,
        // The match is reported by position and length only: the text may be private.
        ...(matched ? { matchIndex: matcher.start(), matchLength: matcher.end() - matcher.start() } : {}),
        explanation: matched
          ? `The text matches the pattern${not ? ', which it must not' : ''}.`
          : `The text does not match the pattern${not ? ', as required' : ''}.`,
      },
    };
  },
});
