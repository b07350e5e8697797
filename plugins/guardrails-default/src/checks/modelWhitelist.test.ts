import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { modelWhitelist } from './modelWhitelist.ts';

describe('default.modelWhitelist', () => {
  test('passes for a listed model, fails otherwise', async () => {
    expect((await modelWhitelist.run(input('x'), { models: ['gpt-4o', 'gpt-4o-mini'] })).verdict).toBe(true);
    const r = await modelWhitelist.run(input('x'), { models: ['claude-3-5-sonnet'] });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ model: 'gpt-4o', listed: false });
  });

  test('`not` makes it a block list; @provider/ prefix; output phase judges the request model', async () => {
    expect((await modelWhitelist.run(input('x'), { models: ['gpt-4o'], not: true })).verdict).toBe(false);
    expect((await modelWhitelist.run(input('x'), { models: ['o1'], not: true })).verdict).toBe(true);
    const prefixed = input({ model: '@openai/gpt-4o', messages: [] });
    expect((await modelWhitelist.run(prefixed, { models: ['gpt-4o'] })).verdict).toBe(true);
    expect((await modelWhitelist.run(prefixed, { models: ['@openai/gpt-4o'] })).verdict).toBe(true);
    expect((await modelWhitelist.run(output('ok'), { models: ['gpt-4o'] })).verdict).toBe(true);
  });

  test('no model fails in both modes', async () => {
    const none = input({ messages: [] });
    expect((await modelWhitelist.run(none, { models: ['a'] })).verdict).toBe(false);
    expect((await modelWhitelist.run(none, { models: ['a'], not: true })).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(modelWhitelist.validate({})).toEqual(['models: is required']);
    expect(modelWhitelist.validate({ models: [] })).toEqual(['models: must not be empty']);
    expect(modelWhitelist.validate({ models: ['a'], inverse: true })).toEqual(['inverse: is not a known parameter']);
  });
});
