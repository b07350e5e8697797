/** What a schema accepts, in words and in JSON kinds. Used on the error path only. */
import { Kind, type TSchema } from '@sinclair/typebox';

type JsonKind = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
const ALL_KINDS: readonly JsonKind[] = ['null', 'boolean', 'number', 'string', 'array', 'object'];

function kindOf(value: unknown): JsonKind | 'other' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'boolean' || type === 'number' || type === 'string' || type === 'object' ? type : 'other';
}

/** The JSON kinds a schema can accept at all (ignoring bounds). */
function kindsOf(schema: TSchema): readonly JsonKind[] {
  switch (schema[Kind]) {
    case 'String':
      return ['string'];
    case 'Number':
    case 'Integer':
      return ['number'];
    case 'Boolean':
      return ['boolean'];
    case 'Null':
      return ['null'];
    case 'Array':
      return ['array'];
    case 'Object':
    case 'Record':
      return ['object'];
    case 'Literal':
      return [kindOf(schema.const) as JsonKind];
    case 'Union':
      return (schema.anyOf as TSchema[]).flatMap(kindsOf);
    default:
      return ALL_KINDS;
  }
}

/** Whether the schema accepts values of this value's JSON kind at all: "was the value meant for this variant?" */
export function acceptsKindOf(schema: TSchema, value: unknown): boolean {
  const kind = kindOf(value);
  return kind !== 'other' && kindsOf(schema).includes(kind);
}

const NOUNS: Record<string, string> = {
  String: 'a string',
  Number: 'a number',
  Integer: 'an integer',
  Boolean: 'a boolean',
  Null: 'null',
  Array: 'an array',
  Object: 'an object',
  Record: 'an object',
};

/** `a string`, `one of "a", "b"`, or the schema's own `description`. Null (meaning "not set") is left out. */
export function describe(schema: TSchema): string {
  if (typeof schema.description === 'string') return schema.description;
  const kind = schema[Kind];
  if (kind === 'Literal') return JSON.stringify(schema.const);
  if (kind !== 'Union') return NOUNS[kind] ?? 'valid';
  const variants = (schema.anyOf as TSchema[]).filter((variant) => variant[Kind] !== 'Null');
  if (variants.length === 1) return describe(variants[0]!);
  const words = variants.map(describe);
  if (variants.every((variant) => variant[Kind] === 'Literal')) return `one of ${words.join(', ')}`;
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}
