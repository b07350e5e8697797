import { describe, expect, test } from 'bun:test';
import { input } from '../testing.ts';
import { allowedRequestTypes } from './allowedRequestTypes.ts';

const embed = (metadata: Record<string, string> = {}) => input({ input: 'x' }, { endpoint: 'embed', path: '/embeddings', metadata });

describe('default.allowedRequestTypes', () => {
  test('allow list', async () => {
    expect((await allowedRequestTypes.run(input('x'), { allowedTypes: ['chatComplete'] })).verdict).toBe(true);
    expect((await allowedRequestTypes.run(embed(), { allowedTypes: ['chatComplete', 'complete'] })).verdict).toBe(false);
    expect((await allowedRequestTypes.run(embed(), { allowedTypes: 'chatComplete, embed' })).verdict).toBe(true);
  });

  test('block list, both lists, metadata, nothing', async () => {
    expect((await allowedRequestTypes.run(embed(), { blockedTypes: ['embed'] })).verdict).toBe(false);
    expect((await allowedRequestTypes.run(input('x'), { blockedTypes: ['embed'] })).verdict).toBe(true);
    expect((await allowedRequestTypes.run(input('x'), { allowedTypes: ['embed'], blockedTypes: ['proxy'] })).verdict).toBe(false);
    const r = await allowedRequestTypes.run(embed({ blocked_endpoints: 'embed,moderate' }), {});
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ from: 'metadata', blockedTypes: ['embed', 'moderate'] });
    expect((await allowedRequestTypes.run(embed({ supported_endpoints: 'embed' }), {})).verdict).toBe(true);
    expect((await allowedRequestTypes.run(embed(), {})).data).toMatchObject({ from: 'none' });
  });

  test('bad parameters', () => {
    expect(allowedRequestTypes.validate({ allowedTypes: ['chat'] })).toEqual([
      'allowedTypes: "chat" is not a request type (one of chatComplete, complete, embed, moderate, messages, countTokens, responses, listModels, proxy)',
    ]);
    expect(allowedRequestTypes.validate({ allowedTypes: ['embed'], blockedTypes: 'embed' })).toEqual(['blockedTypes: embed also in allowedTypes']);
    expect(allowedRequestTypes.validate({ allowedTypes: 5 })[0]).toStartWith('allowedTypes:');
  });
});
