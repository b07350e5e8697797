import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { aliasCheck, defineCheck } from './check.ts';
import { input } from './testing.ts';

const sample = defineCheck({
  name: 'sample',
  schema: Type.Object(
    {
      rule: Type.String({ minLength: 1 }),
      count: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
      mode: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
      nested: Type.Optional(Type.Object({ key: Type.String() }, { additionalProperties: false })),
    },
    { additionalProperties: false },
  ),
  rules: (p) => (p.rule === 'bad' ? ['rule: may not be "bad"'] : []),
  run: (_ctx, p) => ({ verdict: true, data: { seen: p } }),
});

describe('defineCheck', () => {
  test('id and name', () => {
    expect(sample.id).toBe('default.sample');
    expect(sample.name).toBe('sample');
    expect(aliasCheck(sample, 'other').id).toBe('default.other');
  });

  test('violations are readable, one per path', () => {
    expect(sample.validate({})).toEqual(['rule: is required']);
    expect(sample.validate(undefined)).toEqual(['rule: is required']);
    expect(sample.validate({ rule: '' })).toEqual(['rule: must not be empty']);
    expect(sample.validate({ rule: 'x', count: -1 })).toEqual(['count: must be >= 0']);
    expect(sample.validate({ rule: 'x', count: 11 })).toEqual(['count: must be <= 10']);
    expect(sample.validate({ rule: 'x', count: 1.5 })).toEqual(['count: must be an integer']);
    expect(sample.validate({ rule: 'x', mode: 'c' })).toEqual(['mode: must be one of a, b']);
    expect(sample.validate({ rule: 'x', extra: 1 })).toEqual(['extra: is not a known parameter']);
    expect(sample.validate({ rule: 'x', nested: {} })).toEqual(['nested.key: is required']);
    expect(sample.validate({ rule: 1 })).toEqual(['rule: must be a string']);
    expect(sample.validate([])).toEqual(['parameters: must be an object']);
  });

  test('cross-field rules run on schema-valid parameters', () => {
    expect(sample.validate({ rule: 'bad' })).toEqual(['rule: may not be "bad"']);
    expect(sample.validate({ rule: 'ok' })).toEqual([]);
  });

  test('run answers invalid parameters with a failed verdict, never a throw', async () => {
    const r = await sample.run(input('x'), {});
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ error: { kind: 'invalid_parameters', message: 'invalid parameters for default.sample: rule: is required' } });
  });

  test('the engine-level `timeout` is accepted on any check and hidden from it', async () => {
    expect(sample.validate({ rule: 'x', timeout: 500 })).toEqual([]);
    expect(sample.validate({ rule: 'x', timeout: 0 })).toEqual(['timeout: must be a positive number of milliseconds']);
    expect(sample.validate({ rule: 'x', timeout: 'soon' })).toEqual(['timeout: must be a positive number of milliseconds']);
    const result = await sample.run(input('x'), { rule: 'x', timeout: 500 });
    expect(result.data).toEqual({ seen: { rule: 'x' } });
  });
});
