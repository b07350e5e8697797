import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { regexMatch } from './regexMatch.ts';

describe('default.regexMatch', () => {
  test('passes when the text matches', async () => {
    const r = await regexMatch.run(input('order #12345 shipped'), { rule: '#\\d{5}' });
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ matched: true, matchIndex: 6, matchLength: 6, source: 'lastUserMessage' });
  });

  test('fails when it does not; `not` inverts', async () => {
    expect((await regexMatch.run(output('no digits here'), { rule: '\\d+' })).verdict).toBe(false);
    expect((await regexMatch.run(output('no digits here'), { rule: '\\d+', not: true })).verdict).toBe(true);
    expect((await regexMatch.run(output('4 digits'), { rule: '\\d+', not: true })).verdict).toBe(false);
  });

  test('JavaScript literal flags and named groups', async () => {
    expect((await regexMatch.run(input('HELLO'), { rule: '/hello/i' })).verdict).toBe(true);
    expect((await regexMatch.run(input('HELLO'), { rule: 'hello' })).verdict).toBe(false);
    expect((await regexMatch.run(input('a\nb'), { rule: '/^b$/m' })).verdict).toBe(true);
    expect((await regexMatch.run(input('id=42'), { rule: 'id=(?<id>\\d+)' })).verdict).toBe(true);
  });

  test('missing text is the empty string', async () => {
    const ctx = input({ messages: [{ role: 'system', content: 'only system' }] });
    expect((await regexMatch.run(ctx, { rule: '^$' })).verdict).toBe(true);
    expect((await regexMatch.run(ctx, { rule: 'x' })).data).toMatchObject({ textFound: false, matched: false });
  });

  test('bad parameters', () => {
    expect(regexMatch.validate({})).toEqual(['rule: is required']);
    expect(regexMatch.validate({ rule: '' })).toEqual(['rule: must not be empty']);
    expect(regexMatch.validate({ rule: 'x', not: 'yes' })).toEqual(['not: must be true or false']);
    expect(regexMatch.validate({ rule: '(unclosed' })[0]).toStartWith('rule: invalid regular expression');
    // RE2 has no backreferences or lookahead: refused at validation instead of risking exponential time.
    expect(regexMatch.validate({ rule: '(a)\\1' })[0]).toStartWith('rule: invalid regular expression');
    expect(regexMatch.validate({ rule: 'a(?=b)' })[0]).toStartWith('rule: invalid regular expression');
    expect(regexMatch.validate({ rule: '(a+)+$' })).toEqual([]);
  });

  test('catastrophic patterns on 100 000 characters finish (linear time, RE2)', async () => {
    const text = `${'a'.repeat(100_000)}!`;
    for (const rule of ['(a+)+$', '(a|aa)+$', '(a|a?)+b', '^(\\w+\\s?)*$', '(.*a){12}x']) {
      const started = performance.now();
      const r = await regexMatch.run(input(text), { rule });
      const ms = performance.now() - started;
      expect(r.verdict).toBe(false);
      expect(ms).toBeLessThan(5_000); // a hang guard: backtracking here takes minutes
    }
  });
});
