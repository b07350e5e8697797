/**
 * `default.regexReplace` {rule, replacement?="[REDACTED]", failOnDetection?=false}: a transformer that replaces every
 * match of `rule` (re2js: linear time, RE2 syntax, `/…/i` accepted) in the phase's texts: in the input phase every
 * message of every role (or every prompt / input string), in the output phase every choice (see text.ts).
 * `replacement` may use `$1`, `$<name>` and `$&`; `$$` is a literal `$`. Portkey's name `redactText` is accepted
 * for `replacement`.
 *
 * Passes, with the new body in `transformed` when something matched; with `failOnDetection: true` a match fails the
 * verdict (the redacted body is still returned). `data.matches` counts the replacements.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { compileRegex, regexRule } from '../regex.ts';
import { mapTexts } from '../text.ts';

export const regexReplace = defineCheck({
  name: 'regexReplace',
  schema: Type.Object(
    {
      rule: Type.String({ minLength: 1 }),
      replacement: Type.Optional(Type.String()),
      redactText: Type.Optional(Type.String()),
      failOnDetection: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  rules(p) {
    const violations = regexRule(p.rule, 'rule');
    if (p.replacement !== undefined && p.redactText !== undefined)
      violations.push('redactText: give either replacement or redactText, not both');
    return violations;
  },
  run(ctx, p) {
    const re = compileRegex(p.rule);
    const replacement = p.replacement ?? p.redactText ?? '[REDACTED]';
    let matches = 0;
    const fields: string[] = [];
    const { body } = mapTexts(ctx, (text, where) => {
      let n = 0;
      for (const m = re.matcher(text); m.find(); ) n++;
      if (n === 0) return text;
      matches += n;
      fields.push(where);
      // re2js expands $1, $<name>, $&, $$ the way String.prototype.replace does.
      return re.matcher(text).replaceAll(replacement);
    });
    const detected = matches > 0;
    return {
      verdict: !(detected && (p.failOnDetection ?? false)),
      ...(body ? { transformed: body } : {}),
      data: {
        matches,
        fields,
        explanation: detected ? `${matches} matches replaced.` : 'The pattern matched nothing.',
      },
    };
  },
});

