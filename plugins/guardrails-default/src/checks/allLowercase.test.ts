import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { allLowercase } from './allLowercase.ts';

describe('default.allLowercase', () => {
  test('pass, fail, missing text', async () => {
    expect((await allLowercase.run(input('hello, world 42!'), {})).verdict).toBe(true);
    expect((await allLowercase.run(output('hello World'), {})).verdict).toBe(false);
    expect((await allLowercase.run(output('ǅ'), {})).verdict).toBe(false);
    expect((await allLowercase.run(input({ messages: [] }), {})).verdict).toBe(true);
  });

  test('bad parameters', () => {
    expect(allLowercase.validate({ not: true })).toEqual(['not: is not a known parameter']);
    expect(allLowercase.validate('x')).toEqual(['parameters: must be an object']);
  });
});
