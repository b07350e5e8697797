import { describe, expect, test } from 'bun:test';
import { input } from '../testing.ts';
import { modelRules } from './modelRules.ts';

const rules = {
  defaults: ['gpt-4o-mini'],
  metadata: { team: { research: ['gpt-4o', 'o1'], support: ['gpt-4o-mini'] }, tier: { gold: ['gpt-4o'] } },
};
const ask = (model: string, metadata: Record<string, string> = {}) => input({ model, messages: [] }, { metadata });

describe('default.modelRules', () => {
  test('metadata rules choose the allowed models', async () => {
    expect((await modelRules.run(ask('o1', { team: 'research' }), { rules })).verdict).toBe(true);
    const r = await modelRules.run(ask('o1', { team: 'support' }), { rules });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ matchedRules: ['team:support'], usingDefaults: false });
    // Rules add up: support + gold allow gpt-4o.
    expect((await modelRules.run(ask('gpt-4o', { team: 'support', tier: 'gold' }), { rules })).verdict).toBe(true);
  });

  test('defaults when no rule matches; `not`; no allowed model', async () => {
    expect((await modelRules.run(ask('gpt-4o-mini'), { rules })).verdict).toBe(true);
    expect((await modelRules.run(ask('gpt-4o', { team: 'marketing' }), { rules })).verdict).toBe(false);
    expect((await modelRules.run(ask('gpt-4o'), { rules, not: true })).verdict).toBe(true);
    expect((await modelRules.run(ask('gpt-4o'), { rules: { metadata: { team: { a: ['x'] } } } })).verdict).toBe(false);
    expect((await modelRules.run(input({ messages: [] }), { rules })).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(modelRules.validate({})).toEqual(['rules: is required']);
    expect(modelRules.validate({ rules: {} })).toEqual(['rules: needs defaults or metadata rules']);
    expect(modelRules.validate({ rules: { metadata: { team: { a: 'gpt-4o' } } } })).toEqual(['rules.metadata.team.a: must be an array']);
    expect(modelRules.validate({ rules: { default: ['x'] } })).toEqual(['rules.default: is not a known parameter']);
    expect(modelRules.validate({ rules })).toEqual([]);
  });
});
