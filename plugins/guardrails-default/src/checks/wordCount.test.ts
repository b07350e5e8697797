import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { wordCount } from './wordCount.ts';

describe('default.wordCount', () => {
  test('pass, fail, missing text, bad parameters', async () => {
    expect((await wordCount.run(input('one two three'), { minWords: 1, maxWords: 3 })).verdict).toBe(true);
    expect((await wordCount.run(output('one two three four'), { maxWords: 3 })).verdict).toBe(false);
    expect((await wordCount.run(input('x'), { minWords: 2 })).data).toMatchObject({ wordCount: 1, minWords: 2, maxWords: 99999 });
    expect((await wordCount.run(input({ messages: [] }), { minWords: 1 })).verdict).toBe(false);
    expect((await wordCount.run(input({ messages: [] }), {})).verdict).toBe(true);
    expect(wordCount.validate({ minWords: 5, maxWords: 2 })).toEqual(['minWords: must be <= maxWords']);
    expect(wordCount.validate({ minWords: -1 })).toEqual(['minWords: must be >= 0']);
    expect(wordCount.validate({ minWords: '3' })).toEqual(['minWords: must be an integer']);
    expect(wordCount.validate({ minWord: 3 })).toEqual(['minWord: is not a known parameter']);
  });
});
