import { describe, expect, test } from 'bun:test';
import { input } from '../testing.ts';
import { requiredMetadataKeyPairs } from './requiredMetadataKeyPairs.ts';

const ctx = input('x', { metadata: { env: 'production', team: 'research,platform', user: 'u-42' } });
const run = (parameters: Record<string, unknown>) => requiredMetadataKeyPairs.run(ctx, parameters as never);

describe('default.requiredMetadataKeyPairs', () => {
  test('exact (default) with all / any / none', async () => {
    expect((await run({ metadataPairs: { env: 'production', user: 'u-42' } })).verdict).toBe(true);
    const r = await run({ metadataPairs: { env: 'production', user: 'u-1' } });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ matchedKeys: ['env'], unmatchedKeys: ['user'], matchType: 'exact', operator: 'all' });
    expect((await run({ metadataPairs: { env: 'production', user: 'u-1' }, operator: 'any' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { env: 'staging' }, operator: 'none' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { missing: 'x' }, operator: 'none' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { env: 'prod' } })).verdict).toBe(false);
  });

  test('contains, containsAll, regex', async () => {
    expect((await run({ metadataPairs: { env: 'prod' }, matchType: 'contains' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { team: 'platform, research' }, matchType: 'containsAll' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { team: 'platform, sales' }, matchType: 'containsAll' })).verdict).toBe(false);
    expect((await run({ metadataPairs: { user: '^u-\\d+$' }, matchType: 'regex' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { env: '/^PROD/i' }, matchType: 'regex' })).verdict).toBe(true);
    expect((await run({ metadataPairs: { user: '^x' }, matchType: 'regex' })).verdict).toBe(false);
  });

  test('regex values cannot hang', async () => {
    const long = input('x', { metadata: { v: `${'a'.repeat(100_000)}!` } });
    const started = performance.now();
    const r = await requiredMetadataKeyPairs.run(long, { metadataPairs: { v: '^(a+)+$' }, matchType: 'regex' });
    expect(r.verdict).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000); // a hang guard: backtracking here takes minutes
  });

  test('bad parameters', () => {
    expect(requiredMetadataKeyPairs.validate({})).toEqual(['metadataPairs: is required']);
    expect(requiredMetadataKeyPairs.validate({ metadataPairs: {} })).toEqual(['metadataPairs: must not be empty']);
    expect(requiredMetadataKeyPairs.validate({ metadataPairs: { a: 1 } })).toEqual(['metadataPairs.a: must be a string']);
    expect(requiredMetadataKeyPairs.validate({ metadataPairs: { a: 'b' }, matchType: 'fuzzy' })).toEqual([
      'matchType: must be one of exact, contains, containsAll, regex',
    ]);
    expect(requiredMetadataKeyPairs.validate({ metadataPairs: { a: '(' }, matchType: 'regex' })[0]).toStartWith(
      'metadataPairs.a: invalid regular expression',
    );
    expect(requiredMetadataKeyPairs.validate({ metadataPairs: { a: ' , ' }, matchType: 'containsAll' })).toEqual([
      'metadataPairs.a: needs at least one comma-separated item',
    ]);
  });
});
