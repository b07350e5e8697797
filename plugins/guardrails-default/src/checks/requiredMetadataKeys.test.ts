import { describe, expect, test } from 'bun:test';
import { input } from '../testing.ts';
import { requiredMetadataKeys } from './requiredMetadataKeys.ts';

const ctx = input('x', { metadata: { team: 'a', user: '' } });

describe('default.requiredMetadataKeys', () => {
  test('all (default), any, none', async () => {
    expect((await requiredMetadataKeys.run(ctx, { metadataKeys: ['team', 'user'] })).verdict).toBe(true);
    const r = await requiredMetadataKeys.run(ctx, { metadataKeys: ['team', 'env'] });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ foundKeys: ['team'], missingKeys: ['env'] });
    expect((await requiredMetadataKeys.run(ctx, { metadataKeys: ['team', 'env'], operator: 'any' })).verdict).toBe(true);
    expect((await requiredMetadataKeys.run(ctx, { metadataKeys: ['env'], operator: 'none' })).verdict).toBe(true);
    expect((await requiredMetadataKeys.run(ctx, { metadataKeys: ['team'], operator: 'none' })).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(requiredMetadataKeys.validate({})).toEqual(['metadataKeys: is required']);
    expect(requiredMetadataKeys.validate({ metadataKeys: ['a'], operator: 'every' })).toEqual(['operator: must be one of any, all, none']);
    expect(requiredMetadataKeys.validate({ metadataKeys: [1] })).toEqual(['metadataKeys.0: must be a string']);
  });
});
