import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { input, output } from '../testing.ts';
import { regexReplace } from './regexReplace.ts';

const texts = (body: JsonObject | undefined) => (body?.messages as JsonObject[]).map((m) => m.content);

describe('default.regexReplace', () => {
  test('replaces in every message and returns a new body', async () => {
    const ctx = input({ messages: [{ role: 'system', content: 'key sk-123' }, { role: 'user', content: 'my key is sk-456 and sk-789' }] });
    const r = await regexReplace.run(ctx, { rule: 'sk-\\d+' });
    expect(r.verdict).toBe(true);
    expect(texts(r.transformed)).toEqual(['key [REDACTED]', 'my key is [REDACTED] and [REDACTED]']);
    expect(r.data).toMatchObject({ matches: 3, fields: ['messages[0].content', 'messages[1].content'] });
    expect(texts(ctx.request.body)).toEqual(['key sk-123', 'my key is sk-456 and sk-789']);
  });

  test('replacement with groups; redactText alias; answers', async () => {
    const r = await regexReplace.run(input('call 555-0132'), { rule: '(\\d{3})-(?<last>\\d{4})', replacement: '$1-XXXX ($<last>) $$' });
    expect(texts(r.transformed)?.[1]).toBe('call 555-XXXX (0132) $');
    const alias = await regexReplace.run(output('secret: hunter2'), { rule: 'hunter\\d', redactText: '***' });
    expect(((alias.transformed?.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('secret: ***');
  });

  test('no match: passes without a body; failOnDetection fails on a match', async () => {
    const none = await regexReplace.run(input('clean'), { rule: 'secret' });
    expect(none).toMatchObject({ verdict: true, data: { matches: 0 } });
    expect(none.transformed).toBeUndefined();
    const fail = await regexReplace.run(input('a secret'), { rule: 'secret', failOnDetection: true });
    expect(fail.verdict).toBe(false);
    expect(fail.transformed).toBeDefined();
    expect((await regexReplace.run(input('clean'), { rule: 'secret', failOnDetection: true })).verdict).toBe(true);
  });

  test('catastrophic patterns on 100 000 characters finish (linear time, RE2)', async () => {
    const started = performance.now();
    const r = await regexReplace.run(input(`${'a'.repeat(100_000)}!`), { rule: '(a+)+$' });
    expect(r.data).toMatchObject({ matches: 0 });
    const empty = await regexReplace.run(input('abc'), { rule: 'x*', replacement: '-' });
    expect(texts(empty.transformed)?.[1]).toBe('-a-b-c-');
    expect(performance.now() - started).toBeLessThan(5_000); // a hang guard: backtracking here takes minutes
  });

  test('bad parameters', () => {
    expect(regexReplace.validate({})).toEqual(['rule: is required']);
    expect(regexReplace.validate({ rule: '(a' })[0]).toStartWith('rule: invalid regular expression');
    expect(regexReplace.validate({ rule: 'a', replacement: 'x', redactText: 'y' })).toEqual([
      'redactText: give either replacement or redactText, not both',
    ]);
  });
});
