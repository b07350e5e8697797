import { describe, expect, test } from 'bun:test';
import { aliasCheck } from '../check.ts';
import { input, output } from '../testing.ts';
import { allUppercase } from './allUppercase.ts';

describe('default.allUppercase', () => {
  test('pass, fail, no letters, missing text', async () => {
    expect((await allUppercase.run(input('HELLO, WORLD 42!'), {})).verdict).toBe(true);
    expect((await allUppercase.run(output('HELLO World'), {})).verdict).toBe(false);
    expect((await allUppercase.run(output('STRASSE ß'), {})).verdict).toBe(false);
    expect((await allUppercase.run(output('123 你好'), {})).verdict).toBe(true);
    expect((await allUppercase.run(input({ messages: [] }), {})).data).toMatchObject({ textFound: false });
  });

  test("Portkey's alias, bad parameters", async () => {
    const alias = aliasCheck(allUppercase, 'alluppercase');
    expect(alias.id).toBe('default.alluppercase');
    expect((await alias.run(input('ABC'), {})).verdict).toBe(true);
    expect(allUppercase.validate({ strict: true })).toEqual(['strict: is not a known parameter']);
    expect(allUppercase.validate({})).toEqual([]);
  });
});
