import { describe, expect, test } from 'bun:test';
import { countCharacters, countSentences, countWords } from './counts.ts';

describe('counting', () => {
  test('words', () => {
    expect(countWords('')).toBe(0);
    expect(countWords('  one   two\tthree\n')).toBe(3);
    expect(countWords("don't stop state-of-the-art — ok... 42 ✓ 😀")).toBe(5);
    expect(countWords('héllo wörld 你好')).toBe(3);
  });

  test('sentences', () => {
    expect(countSentences('')).toBe(0);
    expect(countSentences('One. Two! Three? Four')).toBe(4);
    expect(countSentences('Version 1.5 is out. Great!!')).toBe(2);
    expect(countSentences('... !!! ')).toBe(0);
    expect(countSentences('你好。再见。')).toBe(2);
  });

  test('characters are code points', () => {
    expect(countCharacters('')).toBe(0);
    expect(countCharacters('a b')).toBe(3);
    expect(countCharacters('😀é')).toBe(2);
  });

  test('long runs stay linear', () => {
    const started = performance.now();
    expect(countSentences(`a${'.'.repeat(200_000)}x`)).toBe(1);
    expect(countWords('-'.repeat(200_000))).toBe(0);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
