import { describe, expect, test } from 'bun:test';
import { input, } from '../testing.ts';
import { characterCount } from './characterCount.ts';

describe('default.characterCount', () => {
  test('pass, fail, bad parameters', async () => {
    expect((await characterCount.run(input('hello'), { minCharacters: 5, maxCharacters: 5 })).verdict).toBe(true);
    expect((await characterCount.run(input('hello!'), { maxCharacters: 5 })).verdict).toBe(false);
    expect((await characterCount.run(input('x'.repeat(10)), {})).data).toMatchObject({ characterCount: 10, maxCharacters: 9999999 });
    expect(characterCount.validate({ minCharacters: 10, maxCharacters: 1 })).toEqual(['minCharacters: must be <= maxCharacters']);
    expect(characterCount.validate({ maxCharacters: null })).toEqual(['maxCharacters: must be an integer']);
  });
});
