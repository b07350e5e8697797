/** The slow path: explains why a body failed its compiled schema. Never called for a valid body. */
import { Kind, type TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { acceptsKindOf, describe } from './describe.ts';
import { toParam } from './param.ts';
import type { Violation } from './types.ts';

export function firstViolation(check: TypeCheck<TSchema>, body: unknown): Violation {
  const first = check.Errors(body).First();
  if (first === undefined) return { param: 'body', reason: 'is invalid' };
  const error = narrowUnion(first);
  return { param: toParam(error.path, body) || 'body', reason: reasonOf(error) };
}

/**
 * A union error alone says "matched no variant". Descend into the variant the value was evidently meant for (same
 * JSON kind; among several, the one whose first error lies furthest into the value) to name the real field.
 */
function narrowUnion(error: ValueError): ValueError {
  let current = error;
  while (current.type === ValueErrorType.Union) {
    const variants = current.schema.anyOf as TSchema[];
    let best: ValueError | undefined;
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[i]!;
      // A lone literal explains nothing beyond the union's own "one of" message.
      if (variant[Kind] === 'Literal' || !acceptsKindOf(variant, current.value)) continue;
      const candidate = current.errors[i]?.First();
      if (candidate !== undefined && (best === undefined || isFurther(candidate.path, best.path))) best = candidate;
    }
    if (best === undefined) return current;
    current = best;
  }
  return current;
}

/** True when pointer `a` reaches further into the value than `b` (a later index, or deeper). */
function isFurther(a: string, b: string): boolean {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] === bs[i]) continue;
    const x = Number(as[i]);
    const y = Number(bs[i]);
    return Number.isInteger(x) && Number.isInteger(y) && x > y;
  }
  return as.length > bs.length;
}

function reasonOf(error: ValueError): string {
  const { schema } = error;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ArrayMinItems:
      return `must contain at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}`;
    case ValueErrorType.ArrayMaxItems:
      return `must contain at most ${schema.maxItems} items`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be <= ${schema.maximum}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be >= ${schema.minimum}`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    default:
      return `must be ${describe(schema)}`;
  }
}
