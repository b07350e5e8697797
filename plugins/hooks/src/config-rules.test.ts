// The hook lists' field rules (config-rules.ts) as the gateway's config validation applies them: with the hook
// engine's fields declared with their rules (as the plugin declares them when guardrails are on), an unknown check id
// or parameters its validate() refuses are violations with their path; declared without them (guardrails off, or a
// bare validator) only the schema applies.

import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import type { ApiKeyType, Caller, GuardrailCheck } from '@gateway/sdk';
import { parseConfigHeader, setSavedGuardrailResolver, useLoadedFields, validateConfig } from '@gateway/config';
import { useWorkspaceFields, WORKSPACE_FIELD_SOURCES } from '../../../core/config/src/testing/workspace-fields.ts';
import { hookConfigFields } from './config-fields.ts';
import { hookFieldRules } from './config-rules.ts';
import type { CheckLookup } from './types.ts';

// The fields of this workspace's providers, strategies and stage plugins, the hook lists without their rules.
useWorkspaceFields();

const checks = new Map<string, GuardrailCheck>(
  [
    {
      id: 'default.contains',
      validate: (p: unknown) => {
        const params = p as Record<string, unknown>;
        const out: string[] = [];
        if (!Array.isArray(params.words)) out.push('words: is required');
        if (params.operator !== undefined && !['any', 'all', 'none'].includes(String(params.operator))) out.push('operator: must be one of any, all, none');
        return out;
      },
      run: async () => ({ verdict: true }),
    },
    { id: 'acme.scan', validate: () => ['needs an api key'], run: async () => ({ verdict: true }) },
    { id: 'acme.free', run: async () => ({ verdict: true }) },
    {
      id: 'acme.broken',
      validate: () => {
        throw new Error('boom');
      },
      run: async () => ({ verdict: true }),
    },
  ].map((c) => [c.id, c as GuardrailCheck]),
);

/** Whose saved guardrails a config may name (the saved-guardrail tests resolve for this scope). */
const SCOPE = { organisationId: 'org-1', workspaceId: 'ws-1' };
const violationsOf = (config: unknown): string[] => {
  const result = validateConfig(config, SCOPE);
  return result.ok ? [] : result.violations;
};
const base = { provider: 'openai', api_key: 'sk-test' };

// The fields and the seam are process-wide: each test puts in what it needs over whatever is set, and takes it out again.
const unsets: (() => void)[] = [];
/** The workspace's fields, the hook lists with their rules checking against `lookup` (as the plugin declares them). */
const hooksWithRules = (lookup: CheckLookup) =>
  useLoadedFields({
    ...WORKSPACE_FIELD_SOURCES,
    plugins: [
      ...[...WORKSPACE_FIELD_SOURCES.plugins].filter(({ fields }) => fields !== hookConfigFields),
      { plugin: '@gateway/plugin-hooks', fields: { ...hookConfigFields, rules: hookFieldRules(lookup) } },
    ],
  });
const withChecks = (lookup: CheckLookup) => void unsets.push(hooksWithRules(lookup));
const withSaved = (fn: Parameters<typeof setSavedGuardrailResolver>[0]) => void unsets.push(setSavedGuardrailResolver(fn));
beforeEach(() => {
  withSaved(undefined);
});
afterEach(() => {
  while (unsets.length) unsets.pop()!();
});

describe('guardrail checks in validateConfig', () => {
  test('without the rules, any check id passes (schema only)', () => {
    expect(violationsOf({ ...base, input_guardrails: [{ 'who.knows': {} }, 'saved-one'] })).toEqual([]);
  });

  test('unknown check ids: in hooks (at checks[i].id) and guardrail entries (at the key)', () => {
    withChecks((id) => checks.get(id));
    expect(
      violationsOf({
        ...base,
        before_request_hooks: [{ id: 'h', checks: [{ id: 'acme.free', parameters: {} }, { id: 'acme.nope', parameters: {} }] }],
        output_guardrails: [{ deny: true, 'other.thing': {} }],
      }),
    ).toEqual([
      'before_request_hooks[0].checks[1].id: unknown guardrail check "acme.nope"',
      'output_guardrails[0]["other.thing"]: unknown guardrail check "other.thing"',
    ]);
  });

  test("parameters refused by the check's validate(): `param: reason` lands at the parameter's path", () => {
    withChecks((id) => checks.get(id));
    expect(
      violationsOf({
        ...base,
        input_guardrails: [{ id: 'g', 'default.contains': { operator: 'some' } }, { contains: { words: ['x'] } }],
        after_request_hooks: [{ id: 'a', checks: [{ id: 'acme.scan', parameters: {} }, { id: 'acme.broken', parameters: {} }] }],
      }),
    ).toEqual([
      'after_request_hooks[0].checks[0].parameters: needs an api key',
      'after_request_hooks[0].checks[1].parameters: parameters could not be validated (boom)',
      'input_guardrails[0]["default.contains"].words: is required',
      'input_guardrails[0]["default.contains"].operator: must be one of any, all, none',
    ]);
  });

  test('a bare check name means default.<name>; a `timeout` parameter must be a positive number', () => {
    withChecks((id) => checks.get(id));
    expect(violationsOf({ ...base, input_guardrails: [{ contains: { words: [] } }] })).toEqual([]);
    expect(violationsOf({ ...base, input_guardrails: [{ 'acme.free': { timeout: -5 } }, { 'acme.free': { timeout: 'soon' } }, { 'acme.free': { timeout: 2000 } }] })).toEqual([
      'input_guardrails[0]["acme.free"].timeout: must be a positive number of milliseconds',
      'input_guardrails[1]["acme.free"].timeout: must be a positive number of milliseconds',
    ]);
  });

  test('saved guardrails: resolved through the seam, their checks validated at the entry that names them', () => {
    withChecks((id) => checks.get(id));
    expect(violationsOf({ ...base, input_guardrails: ['pii'] })).toEqual([
      'input_guardrails[0]: "pii" names a saved guardrail, and no guardrail store is loaded to resolve it',
    ]);
    const saved: Record<string, Record<string, unknown>> = { pii: { deny: true, 'acme.free': {} }, bad: { 'acme.gone': {} }, invalid: { contains: {} } };
    withSaved((id) => saved[id]);
    expect(violationsOf({ ...base, input_guardrails: ['pii'], output_guardrails: ['gone', 'bad', 'invalid'] })).toEqual([
      'output_guardrails[0]: no saved guardrail with id "gone"',
      'output_guardrails[1]: saved guardrail "bad" uses unknown guardrail check "acme.gone"',
      'output_guardrails[2].words: is required',
    ]);
  });

  test('a header naming a saved guardrail is resolved for its caller: to any other it is unknown, as an unknown id is', () => {
    withChecks((id) => checks.get(id));
    const guard = { deny: true, 'acme.free': {} };
    const asked: (string | null)[] = [];
    // Guardrail g1 belongs to workspace ws-1 of org-1 (the store's rule: organisation, then workspace unless null).
    withSaved((id, scope) => {
      asked.push(`${scope.organisationId}/${scope.workspaceId}`);
      return id === 'g1' && scope.organisationId === 'org-1' && (scope.workspaceId === null || scope.workspaceId === 'ws-1') ? guard : undefined;
    });
    const caller = (organisationId: string, workspaceId: string, keyType: ApiKeyType = 'workspace-service'): Caller => ({
      apiKeyId: `k-${organisationId}-${workspaceId}`,
      organisationId,
      workspaceId,
      scopes: [],
      keyType,
      userId: null,
    });
    const header = JSON.stringify({ ...base, input_guardrails: ['g1'] });
    const unknown = JSON.stringify({ ...base, input_guardrails: ['g-none'] });
    const messageOf = (value: string, who?: Caller) => {
      try {
        parseConfigHeader(value, who);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    // Its own workspace gets the guardrail put in (the hook result keeps the id the config used).
    expect(parseConfigHeader(header, caller('org-1', 'ws-1')).input_guardrails).toEqual([{ ...guard, id: 'g1' }]);
    // Another workspace, another organisation, no caller: the very answer an unknown id gets.
    const refused = messageOf(unknown, caller('org-1', 'ws-1'));
    expect(refused).toContain('input_guardrails[0]: no saved guardrail with id');
    for (const who of [caller('org-1', 'ws-2'), caller('org-2', 'ws-1'), undefined]) expect(messageOf(header, who)).toBe(refused.replace('g-none', 'g1'));
    // Cached per scope: the owner still gets it after the refusals, and an organisation-service key acts for every workspace.
    expect(parseConfigHeader(header, caller('org-1', 'ws-1')).input_guardrails).toEqual([{ ...guard, id: 'g1' }]);
    expect(parseConfigHeader(header, caller('org-1', 'ws-9', 'organisation-service')).input_guardrails).toEqual([{ ...guard, id: 'g1' }]);
    const lookups = asked.length;
    parseConfigHeader(header, caller('org-1', 'ws-1'));
    expect(messageOf(header, caller('org-1', 'ws-2'))).toBe(refused.replace('g-none', 'g1'));
    expect(asked.length).toBe(lookups); // answered from the cache
  });

  test('hook lists on a target are refused: hooks run once per request, from the root config', () => {
    withChecks((id) => checks.get(id));
    expect(
      violationsOf({
        strategy: { mode: 'fallback' },
        input_guardrails: [{ 'acme.free': {} }],
        targets: [{ ...base, output_guardrails: [{ 'acme.free': {} }] }, { strategy: { mode: 'single' }, targets: [{ ...base, before_request_hooks: [] }] }],
      }),
    ).toEqual([
      'targets[1].targets[0].before_request_hooks: hooks and guardrails apply to the whole request; set them on the root config',
      'targets[0].output_guardrails: hooks and guardrails apply to the whole request; set them on the root config',
    ]);
  });

  test('declaring the rules forgets cached configs (a header validated before is validated again); taking them out restores', () => {
    const header = JSON.stringify({ ...base, input_guardrails: [{ 'acme.nope': {} }] });
    expect(parseConfigHeader(header).input_guardrails).toHaveLength(1);
    const unset = hooksWithRules((id) => checks.get(id));
    expect(() => parseConfigHeader(header)).toThrow('input_guardrails[0]["acme.nope"]: unknown guardrail check "acme.nope"');
    unset();
    expect(parseConfigHeader(header).input_guardrails).toHaveLength(1);
    // Two gateways: whichever closes first, the other's fields are what remain.
    const a = hooksWithRules((id) => checks.get(id));
    const b = hooksWithRules(() => undefined);
    b();
    expect(violationsOf({ ...base, input_guardrails: [{ 'acme.free': {} }] })).toEqual([]);
    const c = hooksWithRules(() => undefined);
    a();
    expect(violationsOf({ ...base, input_guardrails: [{ 'acme.free': {} }] })).toEqual(['input_guardrails[0]["acme.free"]: unknown guardrail check "acme.free"']);
    c();
    expect(violationsOf({ ...base, input_guardrails: [{ 'acme.nope': {} }] })).toEqual([]);
  });
});
