/**
 * `default.sentenceCount` {minSentences?=0, maxSentences?=99999}: passes when the judged text has between min and
 * max sentences, inclusive (counting rules in counts.ts). Missing text has 0 sentences.
 */
import { countRangeCheck } from '../count-range.ts';
import { countSentences } from '../counts.ts';

export const sentenceCount = countRangeCheck({
  name: 'sentenceCount',
  unit: 'sentences',
  minKey: 'minSentences',
  maxKey: 'maxSentences',
  defaultMax: 99_999,
  count: countSentences,
});
