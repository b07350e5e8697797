/** The any / all / none operator of contains, jsonKeys and the metadata checks. */
import { Type } from '@sinclair/typebox';

export const Operator = Type.Union([Type.Literal('any'), Type.Literal('all'), Type.Literal('none')]);
export type OperatorName = 'any' | 'all' | 'none';

/** `found` of `total` items matched: any ≥ 1, all = total, none = 0. */
export function applyOperator(operator: OperatorName, found: number, total: number): boolean {
  if (operator === 'any') return found > 0;
  if (operator === 'all') return found === total;
  return found === 0;
}
