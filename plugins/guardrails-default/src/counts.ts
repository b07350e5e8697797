/**
 * Counting rules shared by sentenceCount, wordCount and characterCount.
 *
 * - words: runs of letters, digits, marks, apostrophes, hyphens and underscores, counted only when they hold at least
 *   one letter or digit (so "—", "..." and emoji are not words; "don't" and "state-of-the-art" are one word each).
 * - sentences: runs of text ending in `.`, `!`, `?`, `…` followed by whitespace or the end, or in a CJK `。！？`, plus
 *   a final run without end punctuation; a sentence must hold at least one letter or digit. "e.g." inside a sentence
 *   is split like any period followed by a space (no abbreviation list).
 * - characters: Unicode code points (an emoji or an accented letter typed as one character counts as 1), whitespace
 *   included.
 */
const WORD = /[\p{L}\p{N}\p{M}_'’-]+/gu;
const HAS_ALNUM = /[\p{L}\p{N}]/u;
const TERMINATORS = new Set(['.', '!', '?', '…', '。', '！', '？']);
const FULL_WIDTH = new Set(['。', '！', '？']);
const SPACE = /\s/u;

export function countWords(text: string): number {
  let n = 0;
  for (const match of text.matchAll(WORD)) if (HAS_ALNUM.test(match[0])) n++;
  return n;
}

/** One linear pass (a regex with a lookahead after `[.!?]+` would be quadratic on long runs of dots). */
export function countSentences(text: string): number {
  const chars = [...text];
  let n = 0;
  let hasAlnum = false;
  for (let i = 0; i < chars.length; ) {
    const c = chars[i] as string;
    if (!TERMINATORS.has(c)) {
      if (!hasAlnum && HAS_ALNUM.test(c)) hasAlnum = true;
      i++;
      continue;
    }
    let j = i;
    let fullWidth = false;
    while (j < chars.length && TERMINATORS.has(chars[j] as string)) {
      if (FULL_WIDTH.has(chars[j] as string)) fullWidth = true;
      j++;
    }
    if (fullWidth || j === chars.length || SPACE.test(chars[j] as string)) {
      if (hasAlnum) n++;
      hasAlnum = false;
    }
    i = j;
  }
  return hasAlnum ? n + 1 : n;
}

export function countCharacters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
