import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { jsonSchema } from './jsonSchema.ts';

const person = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'age'],
  additionalProperties: false,
};

describe('default.jsonSchema', () => {
  test('passes on valid JSON, whole or fenced or inside prose', async () => {
    expect((await jsonSchema.run(output('{"name": "Ada", "age": 36}'), { schema: person })).verdict).toBe(true);
    const fenced = await jsonSchema.run(output('Here:\n```json\n{"name": "Ada", "age": 36}\n```\nDone.'), { schema: person });
    expect(fenced.verdict).toBe(true);
    expect(fenced.data).toMatchObject({ jsonFrom: 'codeBlock' });
    const prose = await jsonSchema.run(output('Result: {"name": "Ada", "age": 36} as asked'), { schema: person });
    expect(prose.data).toMatchObject({ jsonFrom: 'braces', valid: true });
  });

  test('fails on invalid JSON with the reasons', async () => {
    const r = await jsonSchema.run(output('{"name": 5, "age": -1, "x": true}'), { schema: person });
    expect(r.verdict).toBe(false);
    const errors = (r.data as { errors: string[] }).errors;
    expect(errors).toContain('/name must be string');
    expect(errors).toContain('/age must be >= 0');
    expect(errors.some((e) => e.includes('additional properties'))).toBe(true);
  });

  test('no JSON fails; `not` inverts; works on the request too', async () => {
    expect((await jsonSchema.run(output('just words'), { schema: person })).data).toMatchObject({ jsonFound: false });
    expect((await jsonSchema.run(output('just words'), { schema: person })).verdict).toBe(false);
    expect((await jsonSchema.run(output('just words'), { schema: person, not: true })).verdict).toBe(true);
    expect((await jsonSchema.run(input('{"name":"x","age":1}'), { schema: person })).verdict).toBe(true);
    expect((await jsonSchema.run(output({ choices: [] }), { schema: person })).data).toMatchObject({ textFound: false });
  });

  test('2020-12 dialect by $schema', async () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'number' }], items: false };
    expect((await jsonSchema.run(output('[1]'), { schema })).verdict).toBe(true);
    expect((await jsonSchema.run(output('[1, 2]'), { schema })).verdict).toBe(false);
  });

  test('schema patterns run in linear time', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+x+)+y$': {} } };
    const text = JSON.stringify({ s: `${'a'.repeat(100_000)}!` });
    const started = performance.now();
    const r = await jsonSchema.run(output(text), { schema });
    expect(r.verdict).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000); // a hang guard: backtracking here takes minutes
  });

  test('bad parameters', () => {
    expect(jsonSchema.validate({})).toEqual(['schema: is required']);
    expect(jsonSchema.validate({ schema: 'object' })).toEqual(['schema: must be an object']);
    expect(jsonSchema.validate({ schema: { type: 'strange' } })[0]).toStartWith('schema: is not a usable JSON Schema');
    expect(jsonSchema.validate({ schema: { type: 'string', pattern: '(?=x)' } })[0]).toStartWith('schema: is not a usable JSON Schema');
    expect(jsonSchema.validate({ schema: person })).toEqual([]);
  });

  test('the same $id in two schemas does not collide', async () => {
    const a = { $id: 'https://example.test/s', type: 'string' };
    const b = { $id: 'https://example.test/s', type: 'number' };
    expect((await jsonSchema.run(output('"x"'), { schema: a })).verdict).toBe(true);
    expect((await jsonSchema.run(output('"x"'), { schema: b })).verdict).toBe(false);
  });
});
