/**
 * `default.characterCount` {minCharacters?=0, maxCharacters?=9999999}: passes when the judged text has between min and
 * max characters, inclusive (counting rules in counts.ts). Missing text has 0 characters.
 */
import { countRangeCheck } from '../count-range.ts';
import { countCharacters } from '../counts.ts';

export const characterCount = countRangeCheck({
  name: 'characterCount',
  unit: 'characters',
  minKey: 'minCharacters',
  maxKey: 'maxCharacters',
  defaultMax: 9_999_999,
  count: countCharacters,
});
