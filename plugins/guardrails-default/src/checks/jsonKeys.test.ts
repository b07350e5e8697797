import { describe, expect, test } from 'bun:test';
import { output } from '../testing.ts';
import { jsonKeys } from './jsonKeys.ts';

const text = '{"title": "x", "summary": "y"}';

describe('default.jsonKeys', () => {
  test('any / all / none', async () => {
    expect((await jsonKeys.run(output(text), { keys: ['title', 'nope'] })).verdict).toBe(true);
    expect((await jsonKeys.run(output(text), { keys: ['title', 'nope'], operator: 'all' })).verdict).toBe(false);
    expect((await jsonKeys.run(output(text), { keys: ['title', 'summary'], operator: 'all' })).verdict).toBe(true);
    expect((await jsonKeys.run(output(text), { keys: ['nope'], operator: 'none' })).verdict).toBe(true);
    const r = await jsonKeys.run(output(text), { keys: ['title', 'nope'], operator: 'none' });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ presentKeys: ['title'], missingKeys: ['nope'] });
  });

  test('no JSON object: any/all fail, none passes', async () => {
    expect((await jsonKeys.run(output('plain'), { keys: ['a'] })).verdict).toBe(false);
    expect((await jsonKeys.run(output('[1,2]'), { keys: ['a'], operator: 'all' })).verdict).toBe(false);
    expect((await jsonKeys.run(output('plain'), { keys: ['a'], operator: 'none' })).verdict).toBe(true);
  });

  test('bad parameters', () => {
    expect(jsonKeys.validate({})).toEqual(['keys: is required']);
    expect(jsonKeys.validate({ keys: [] })).toEqual(['keys: must not be empty']);
    expect(jsonKeys.validate({ keys: ['a'], operator: 'most' })).toEqual(['operator: must be one of any, all, none']);
  });
});
