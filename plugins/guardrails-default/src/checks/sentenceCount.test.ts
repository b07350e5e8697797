import { describe, expect, test } from 'bun:test';
import { output } from '../testing.ts';
import { sentenceCount } from './sentenceCount.ts';

describe('default.sentenceCount', () => {
  test('pass, fail, bad parameters', async () => {
    expect((await sentenceCount.run(output('Hi. Bye.'), { minSentences: 2 })).verdict).toBe(true);
    expect((await sentenceCount.run(output('Hi. Bye. Again.'), { maxSentences: 2 })).verdict).toBe(false);
    expect((await sentenceCount.run(output(''), { minSentences: 1 })).verdict).toBe(false);
    expect(sentenceCount.validate({ minSentences: 3, maxSentences: 1 })).toEqual(['minSentences: must be <= maxSentences']);
    expect(sentenceCount.validate({ maxSentences: 1.5 })).toEqual(['maxSentences: must be an integer']);
  });
});
