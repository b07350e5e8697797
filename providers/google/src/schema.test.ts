import { expect, test } from 'bun:test';
import { toGeminiParameters, toGeminiSchema } from './schema.ts';

test('keywords Gemini refuses are dropped; the rest is kept', () => {
  expect(
    toGeminiSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      title: 'T',
      description: 'D',
      additionalProperties: false,
      patternProperties: { '^x': { type: 'string' } },
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 9, pattern: '^a', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', minimum: 0, maximum: 9, format: 'int32' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3, uniqueItems: true },
      },
      required: ['name', 'ghost'],
    }),
  ).toEqual({
    type: 'object',
    title: 'T',
    description: 'D',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 9, pattern: '^a' },
      when: { type: 'string', format: 'date-time' },
      count: { type: 'integer', minimum: 0, maximum: 9, format: 'int32' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
    },
    required: ['name'],
  });
});

test('nullable types, anyOf with null, oneOf, const and enums', () => {
  expect(toGeminiSchema({ type: ['string', 'null'] })).toEqual({ type: 'string', nullable: true });
  expect(toGeminiSchema({ anyOf: [{ type: 'integer' }, { type: 'null' }] })).toEqual({ type: 'integer', nullable: true });
  expect(toGeminiSchema({ oneOf: [{ type: 'integer' }, { type: 'string' }] })).toEqual({ anyOf: [{ type: 'integer' }, { type: 'string' }] });
  expect(toGeminiSchema({ type: ['integer', 'string'] })).toEqual({ anyOf: [{ type: 'integer' }, { type: 'string' }] });
  expect(toGeminiSchema({ const: 'x' })).toEqual({ type: 'string', enum: ['x'] });
  expect(toGeminiSchema({ type: 'string', enum: ['a', 'b'] })).toEqual({ type: 'string', enum: ['a', 'b'] });
  // Gemini enums are strings: a numeric enum is dropped, the type kept
  expect(toGeminiSchema({ type: 'integer', enum: [1, 2] })).toEqual({ type: 'integer' });
});

test('local $refs are inlined; a self-reference stops at the depth limit', () => {
  const schema = {
    type: 'object',
    properties: { home: { $ref: '#/$defs/Address', description: 'Home' }, work: { $ref: '#/definitions/Address' } },
    $defs: { Address: { type: 'object', properties: { city: { type: 'string' } } } },
    definitions: { Address: { type: 'object', properties: { street: { type: 'string' } } } },
  };
  expect(toGeminiSchema(schema)).toEqual({
    type: 'object',
    properties: {
      home: { type: 'object', description: 'Home', properties: { city: { type: 'string' } } },
      work: { type: 'object', properties: { street: { type: 'string' } } },
    },
  });
  const cyclic = { type: 'object', properties: { next: { $ref: '#' } } };
  const out = toGeminiSchema({ ...cyclic, $defs: { Node: cyclic }, properties: { next: { $ref: '#/$defs/Node' } } });
  expect(JSON.stringify(out).length).toBeLessThan(5000);
});

test('allOf merges its parts', () => {
  expect(
    toGeminiSchema({ allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } }, required: ['b'] }] }),
  ).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] });
});

test('parameters: an object without properties is no parameters at all', () => {
  expect(toGeminiParameters({ type: 'object', properties: {} })).toBeUndefined();
  expect(toGeminiParameters({ type: 'object' })).toBeUndefined();
  expect(toGeminiParameters(undefined)).toBeUndefined();
  expect(toGeminiParameters({ type: 'object', properties: { a: { type: 'boolean' } } })).toEqual({ type: 'object', properties: { a: { type: 'boolean' } } });
});

test('the input schema is never changed', () => {
  const schema = { type: 'object', additionalProperties: false, properties: { a: { type: ['string', 'null'] } }, $defs: { X: { type: 'string' } } };
  const before = structuredClone(schema);
  toGeminiSchema(schema);
  expect(schema).toEqual(before);
});
