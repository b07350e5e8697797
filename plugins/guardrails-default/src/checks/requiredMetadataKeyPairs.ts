/**
 * `default.requiredMetadataKeyPairs` {metadataPairs, operator?=all, matchType?=exact}: the request's metadata must
 * match all / any / none of the key/value pairs in `metadataPairs`. A pair matches when the metadata has the key and
 * its value, by `matchType`:
 * - `exact`: equals the expected value;
 * - `contains`: contains the expected value as a substring (case-sensitive);
 * - `containsAll`: the expected value is a comma-separated list, and the metadata value contains every item
 *   (trimmed, as substrings);
 * - `regex`: the expected value is a pattern (RE2 syntax, linear time, `/…/i` accepted) found anywhere in the value;
 *   anchor with `^…$` for a whole-value match.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { Operator, applyOperator } from '../operator.ts';
import { compileRegex, regexRule } from '../regex.ts';

const MatchType = Type.Union([
  Type.Literal('exact'),
  Type.Literal('contains'),
  Type.Literal('containsAll'),
  Type.Literal('regex'),
]);
type MatchTypeName = 'exact' | 'contains' | 'containsAll' | 'regex';

function pairMatches(actual: string | undefined, expected: string, matchType: MatchTypeName): boolean {
  if (actual === undefined) return false;
  switch (matchType) {
    case 'exact':
      return actual === expected;
    case 'contains':
      return actual.includes(expected);
    case 'containsAll':
      return expected
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .every((item) => actual.includes(item));
    case 'regex':
      return compileRegex(expected).test(actual);
  }
}

export const requiredMetadataKeyPairs = defineCheck({
  name: 'requiredMetadataKeyPairs',
  schema: Type.Object(
    {
      metadataPairs: Type.Record(Type.String({ minLength: 1 }), Type.String(), { minProperties: 1 }),
      operator: Type.Optional(Operator),
      matchType: Type.Optional(MatchType),
    },
    { additionalProperties: false },
  ),
  rules(p) {
    if (p.matchType === 'containsAll')
      return Object.entries(p.metadataPairs).flatMap(([k, v]) =>
        v.split(',').some((s) => s.trim() !== '') ? [] : [`metadataPairs.${k}: needs at least one comma-separated item`],
      );
    if (p.matchType !== 'regex') return [];
    return Object.entries(p.metadataPairs).flatMap(([k, v]) => regexRule(v, `metadataPairs.${k}`));
  },
  run(ctx, p) {
    const operator = p.operator ?? 'all';
    const matchType = p.matchType ?? 'exact';
    const metadata = ctx.request.metadata;
    const entries = Object.entries(p.metadataPairs);
    const matched: string[] = [];
    const unmatched: string[] = [];
    for (const [key, expected] of entries)
      (pairMatches(Object.hasOwn(metadata, key) ? metadata[key] : undefined, expected, matchType) ? matched : unmatched).push(key);
    const verdict = applyOperator(operator, matched.length, entries.length);
    return {
      verdict,
      data: {
        operator,
        matchType,
        matchedKeys: matched,
        unmatchedKeys: unmatched,
        explanation: `${matched.length} of ${entries.length} metadata pairs match (${matchType}); operator ${operator} ${verdict ? 'passes' : 'fails'}.`,
      },
    };
  },
});
