import { describe, expect, test } from 'bun:test';
import type { CallFacts } from './facts.ts';
import { endpointTypeOf } from './facts.ts';
import { compileMatcher, conditionViolations, groupByViolations, type Indexed, PolicyIndex } from './match.ts';

const facts = (over: Partial<CallFacts> = {}): CallFacts => ({
  organisationId: 'org-1',
  workspaceId: 'ws-1',
  apiKeyId: 'key-1',
  userId: null,
  endpointType: 'chatComplete',
  provider: 'openai',
  providerAlias: undefined,
  model: 'gpt-4o',
  metadata: {},
  ...over,
});

describe('conditions and group_by', () => {
  test('every key must match; several values of one key match any of them', () => {
    const m = compileMatcher(
      [
        { key: 'endpoint_type', value: 'chatComplete' },
        { key: 'endpoint_type', value: 'embed' },
        { key: 'metadata.team', value: 'red' },
      ],
      [],
    );
    expect(m.matches(facts({ metadata: { team: 'red' } }))).toBe(true);
    expect(m.matches(facts({ endpointType: 'embed', metadata: { team: 'red' } }))).toBe(true);
    expect(m.matches(facts({ endpointType: 'moderate', metadata: { team: 'red' } }))).toBe(false);
    expect(m.matches(facts({ metadata: { team: 'blue' } }))).toBe(false);
    expect(m.matches(facts())).toBe(false); // no such metadata
    expect(compileMatcher([], []).matches(facts())).toBe(true);
  });

  test('provider matches the adapter or the @slug the target named; model and api_key by value', () => {
    const m = compileMatcher([{ key: 'provider', value: '@team-openai' }], []);
    expect(m.matches(facts({ providerAlias: '@team-openai' }))).toBe(true);
    expect(m.matches(facts())).toBe(false);
    expect(compileMatcher([{ key: 'provider', value: 'openai' }], []).matches(facts({ providerAlias: '@x' }))).toBe(true);
    expect(compileMatcher([{ key: 'model', value: 'gpt-4o' }, { key: 'api_key', value: 'key-2' }], []).matches(facts())).toBe(false);
  });

  test('groups: one per distinct value; missing values and separators cannot collide', () => {
    const none = compileMatcher([], []);
    expect(none.groupOf(facts())).toBe('');
    const byKey = compileMatcher([], [{ key: 'api_key' }]);
    expect(byKey.groupOf(facts())).not.toBe(byKey.groupOf(facts({ apiKeyId: 'key-2' })));
    const two = compileMatcher([], [{ key: 'metadata.a' }, { key: 'user' }]);
    expect(two.groupOf(facts({ metadata: { a: 'x|-' } }))).not.toBe(two.groupOf(facts({ metadata: { a: 'x' }, userId: '-' })));
    expect(two.groupOf(facts())).toBe('-|-');
    expect(two.groupOf(facts({ metadata: { a: '-' } }))).not.toBe(two.groupOf(facts()));
  });

  test('violations name the path and the allowed keys', () => {
    expect(conditionViolations([{ key: 'workspace_id', value: 'w' }, { key: 'metadata.env', value: 'prod' }])).toEqual([]);
    expect(conditionViolations([{ key: 'colour', value: 'red' }])[0]).toContain('conditions[0].key: must be one of workspace_id');
    expect(conditionViolations([{ key: 'metadata.', value: 'x' }])).toHaveLength(1);
    expect(conditionViolations([{ key: 'model', value: '' }])).toEqual(['conditions[0].value: must be 1 to 512 characters']);
    expect(conditionViolations({})).toEqual(['conditions: must be an array of {key, value}']);
    expect(groupByViolations([{ key: 'api_key' }, { key: 'api_key' }])).toEqual(['group_by[1].key: api_key is given twice']);
    expect(groupByViolations([{ key: 'model' }])[0]).toContain('group_by[0].key: must be one of api_key');
  });

  test('endpoint types of passthrough paths', () => {
    expect(endpointTypeOf('proxy', '/images/generations', 'POST')).toBe('imageGenerate');
    expect(endpointTypeOf('proxy', '/assistants', 'POST')).toBe('proxy');
    expect(endpointTypeOf('embed', '/embeddings', 'POST')).toBe('embed');
    // The Responses API, first-class since issue #19, keeps the type it had as a passthrough path.
    expect(endpointTypeOf('responses', '/responses', 'POST')).toBe('createModelResponse');
    expect(endpointTypeOf('proxy', '/responses', 'POST')).toBe('createModelResponse');
  });
});

describe('PolicyIndex', () => {
  const entry = (id: string, organisationId: string, workspaceId: string | null, conditions: { key: string; value: string }[] = []): Indexed<string> => ({
    policy: id,
    organisationId,
    workspaceId,
    matcher: compileMatcher(conditions, []),
  });

  test('a call sees its workspace policies and its organisation policies, and only those that match', () => {
    const index = new PolicyIndex([
      entry('ws1-own', 'org-1', 'ws-1'),
      entry('ws2-own', 'org-1', 'ws-2'),
      entry('org-wide', 'org-1', null),
      entry('org-for-ws2', 'org-1', null, [{ key: 'workspace_id', value: 'ws-2' }]),
      entry('other-org', 'org-2', null),
      entry('embeds', 'org-1', null, [{ key: 'endpoint_type', value: 'embed' }]),
    ]);
    expect(index.match(facts()).map((e) => e.policy)).toEqual(['ws1-own', 'org-wide']);
    expect(index.match(facts({ workspaceId: 'ws-2', endpointType: 'embed' })).map((e) => e.policy).sort()).toEqual(['embeds', 'org-for-ws2', 'org-wide', 'ws2-own']);
    expect(index.match(facts({ organisationId: 'org-3', workspaceId: 'ws-9' }))).toHaveLength(0);
  });
});
