/**
 * `default.wordCount` {minWords?=0, maxWords?=99999}: passes when the judged text has between min and
 * max words, inclusive (counting rules in counts.ts). Missing text has 0 words.
 */
import { countRangeCheck } from '../count-range.ts';
import { countWords } from '../counts.ts';

export const wordCount = countRangeCheck({
  name: 'wordCount',
  unit: 'words',
  minKey: 'minWords',
  maxKey: 'maxWords',
  defaultMax: 99_999,
  count: countWords,
});
