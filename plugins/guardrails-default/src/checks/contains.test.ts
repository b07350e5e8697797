import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { contains } from './contains.ts';

describe('default.contains', () => {
  test('any (default), all, none', async () => {
    const ctx = output('The quick brown fox');
    expect((await contains.run(ctx, { words: ['fox', 'cat'] })).verdict).toBe(true);
    expect((await contains.run(ctx, { words: ['fox', 'cat'], operator: 'all' })).verdict).toBe(false);
    expect((await contains.run(ctx, { words: ['fox', 'quick'], operator: 'all' })).verdict).toBe(true);
    expect((await contains.run(ctx, { words: ['cat', 'dog'], operator: 'none' })).verdict).toBe(true);
    const r = await contains.run(ctx, { words: ['fox', 'dog'], operator: 'none' });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ foundWords: ['fox'], missingWords: ['dog'] });
  });

  test('case-sensitive substrings; missing text contains nothing', async () => {
    expect((await contains.run(input('The Fox'), { words: ['fox'] })).verdict).toBe(false);
    expect((await contains.run(input('concatenate'), { words: ['cat'] })).verdict).toBe(true);
    const empty = input({ messages: [] });
    expect((await contains.run(empty, { words: ['a'] })).verdict).toBe(false);
    expect((await contains.run(empty, { words: ['a'], operator: 'none' })).verdict).toBe(true);
  });

  test('bad parameters', () => {
    expect(contains.validate({ operator: 'any' })).toEqual(['words: is required']);
    expect(contains.validate({ words: [''] })).toEqual(['words.0: must not be empty']);
    expect(contains.validate({ words: 'fox' })).toEqual(['words: must be an array']);
  });
});
