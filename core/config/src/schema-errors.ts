/**
 * Turns TypeBox's errors into `path: reason` violations: one reason per path, readable wording, and unions
 * (guardrail entries, enums) resolved to the variant the value was evidently meant to be.
 */
import { ValueErrorType, type ValueError, type ValueErrorIterator } from '@sinclair/typebox/errors';
import type { TSchema } from '@sinclair/typebox';
import { formatPath, pointerToSegments } from './path.ts';

const TYPE_REASONS: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.String]: 'must be a string',
  [ValueErrorType.Number]: 'must be a number',
  [ValueErrorType.Integer]: 'must be an integer',
  [ValueErrorType.Boolean]: 'must be a boolean',
  [ValueErrorType.Object]: 'must be an object',
  [ValueErrorType.Array]: 'must be an array',
  [ValueErrorType.ObjectAdditionalProperties]: 'unknown property',
  [ValueErrorType.ObjectRequiredProperty]: 'is required',
};

/** Violations for every error; `skip` holds formatted paths already reported (forbidden keys) and their subtrees. */
export function schemaViolations(errors: Iterable<ValueError>, root: unknown, skip: readonly string[]): string[] {
  const out: string[] = [];
  const reported = new Set<string>();
  const visit = (list: Iterable<ValueError>) => {
    for (const error of list) {
      const path = formatPath(pointerToSegments(error.path, root));
      if (reported.has(path) || skip.some((prefix) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`))) continue;
      if (error.type === ValueErrorType.Union) {
        const chosen = chooseVariant(error);
        if (chosen) {
          visit(chosen);
          continue;
        }
      }
      reported.add(path);
      out.push(`${path}: ${reason(error)}`);
    }
  };
  visit(errors);
  return out;
}

function reason(error: ValueError): string {
  const { schema } = error;
  switch (error.type) {
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be >= ${schema.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be <= ${schema.maximum}`;
    case ValueErrorType.ArrayMaxItems:
      return `at most ${schema.maxItems} items`;
    case ValueErrorType.Union:
      return unionReason(schema);
    case ValueErrorType.Literal:
      // A union of one (a gateway with one strategy mode) is the literal itself: worded as the union would be.
      return `must be one of: ${String(schema.const)}`;
    default:
      return TYPE_REASONS[error.type] ?? lowerFirst(error.message);
  }
}

/**
 * A union's variants each explain why they failed. A variant that failed at the union's own path rejected the
 * value's type outright; if exactly one variant accepted the type, its inner errors are the useful ones.
 */
function chooseVariant(error: ValueError): ValueError[] | undefined {
  const candidates = error.errors
    .map((iterator: ValueErrorIterator) => [...iterator])
    .filter((variantErrors) => variantErrors.length > 0 && variantErrors.every((e) => e.path !== error.path));
  return candidates.length === 1 ? candidates[0] : undefined;
}

function unionReason(schema: TSchema): string {
  const variants = (schema.anyOf ?? []) as TSchema[];
  if (variants.length > 0 && variants.every((v) => v.const !== undefined)) {
    return `must be one of: ${variants.map((v) => String(v.const)).join(', ')}`;
  }
  const kinds = variants.map((v) => (v.type === 'object' ? 'an object' : `a ${String(v.type)}`));
  return `must be ${kinds.join(' or ')}`;
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
