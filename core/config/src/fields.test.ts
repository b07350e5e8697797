/**
 * The config is assembled from what loaded (issue #14): a third party's provider brings its credential fields, a
 * third party's strategy its mode and fields, and a stage plugin its own fields (the cache's `cache`, say), without a
 * line of core naming them.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { defineConfigFields, defineStrategyFields, type ProviderAdapter, type Strategy } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { assembleConfig, loadedConfig, useLoadedFields } from './fields.ts';
import { WORKSPACE_PLUGIN_FIELDS } from './testing/workspace-fields.ts';
import { validateConfig } from './validate.ts';

const acmeFields = defineConfigFields({
  fields: { acme_tenant: Type.String({ pattern: '^[a-z]+$' }), acme_passphrase: Type.String() },
  secret: ['acme_passphrase'],
  destination: ['acme_tenant'],
  credentialSets: [['acme_tenant', 'acme_passphrase']],
  headerBound: ['acme_passphrase'],
});
const acme: ProviderAdapter = { id: 'acme', baseUrl: () => 'https://acme.invalid', authorize: (call) => call, endpoints: {}, targetFields: acmeFields };

const sticky: Strategy = {
  mode: 'sticky',
  plan: () => [0],
  next: () => false,
  strategyFields: defineStrategyFields({
    fields: { sticky_by: Type.String() },
    check: (strategy) => (strategy.sticky_by === undefined ? [{ path: ['strategy', 'sticky_by'], reason: 'required when mode is sticky' }] : []),
  }),
};
const single: Strategy = { mode: 'single', plan: () => [0], next: () => false };

const violations = (value: unknown) => {
  const result = validateConfig(value);
  return result.ok ? [] : result.violations;
};

let unset: (() => void) | undefined;
afterEach(() => {
  unset?.();
  unset = undefined;
});

describe('config fields from the loaded plugins', () => {
  const config = { provider: 'acme', acme_tenant: 'north', acme_passphrase: 'p' };

  test('a provider brings its credential fields: unknown without it, a credential with it', () => {
    unset = useLoadedFields({ providers: [], strategies: [single], plugins: WORKSPACE_PLUGIN_FIELDS });
    expect(violations(config)).toEqual([
      'acme_tenant: unknown property',
      'acme_passphrase: unknown property',
      'config: must contain at least one of these property sets: provider+api_key, provider+custom_host, virtual_key, strategy+targets, cache, retry, prompt_id, forward_headers, request_timeout, after_request_hooks, before_request_hooks, input_guardrails, output_guardrails, passthrough, provider+Authorization',
      'api_key: required when provider is given without custom_host (or use virtual_key, Authorization or cloud credentials)',
    ]);
    unset();
    unset = useLoadedFields({ providers: [acme], strategies: [single], plugins: WORKSPACE_PLUGIN_FIELDS });
    expect(violations(config)).toEqual([]);
    expect(violations({ ...config, acme_tenant: 'North 1' })).toEqual(["acme_tenant: expected string to match '^[a-z]+$'"]);
    expect(violations({ ...config, acme_passphrase: 'a\r\nb' })).toEqual(['acme_passphrase: contains characters a header value cannot carry']);
  });

  test('a strategy brings its mode and fields; strategy.mode is one of the loaded modes', () => {
    const routed = { strategy: { mode: 'sticky', sticky_by: 'user' }, targets: [{ provider: 'openai', api_key: 'k' }] };
    unset = useLoadedFields({ providers: [], strategies: [single] });
    expect(violations(routed)).toEqual(['strategy.sticky_by: unknown property', 'strategy.mode: must be one of: single']);
    unset();
    unset = useLoadedFields({ providers: [], strategies: [single, sticky] });
    expect(violations(routed)).toEqual([]);
    expect(violations({ ...routed, strategy: { mode: 'sticky' } })).toEqual(['strategy.sticky_by: required when mode is sticky']);
    expect(violations({ ...routed, strategy: { mode: 'nearest' } })).toEqual(['strategy.mode: must be one of: single, sticky']);
  });

  test('a field declared twice must be the same; a generic field cannot be declared', () => {
    const other: ProviderAdapter = { ...acme, id: 'acme-2', targetFields: defineConfigFields({ fields: { acme_tenant: Type.Number() } }) };
    expect(() => assembleConfig({ providers: [acme, other], strategies: [] })).toThrow('provider acme-2 declares config field "acme_tenant" with another schema');
    const shared: ProviderAdapter = { ...acme, id: 'acme-eu' };
    expect(() => assembleConfig({ providers: [acme, shared], strategies: [] })).not.toThrow();
    const greedy: ProviderAdapter = { ...acme, id: 'greedy', targetFields: defineConfigFields({ fields: { api_key: Type.Number() } }) };
    expect(() => assembleConfig({ providers: [greedy], strategies: [] })).toThrow('provider greedy declares config field "api_key", which is a generic field');
  });

  test('a stage plugin brings its fields: unknown without it, a property set and inherited as it declares', () => {
    const cached = { cache: { mode: 'simple' } };
    unset = useLoadedFields({ providers: [], strategies: [single] });
    expect(violations(cached)).toEqual([
      'cache: unknown property',
      'config: must contain at least one of these property sets: provider+api_key, provider+custom_host, virtual_key, strategy+targets, retry, prompt_id, forward_headers, request_timeout, passthrough, provider+Authorization',
    ]);
    expect(loadedConfig().inherited).toEqual([]);
    unset();
    unset = useLoadedFields({ providers: [], strategies: [single], plugins: WORKSPACE_PLUGIN_FIELDS });
    expect(violations(cached)).toEqual([]);
    expect(violations({ cache: { mode: 'exact' } })).toEqual(['cache.mode: must be one of: simple, semantic']);
    expect(loadedConfig().inherited).toEqual(['cache', 'cb_config', 'before_request_hooks', 'after_request_hooks', 'input_guardrails', 'output_guardrails']);
    expect(loadedConfig().propertySets.map((set) => set.join('+'))).toEqual([
      'provider+api_key', 'provider+custom_host', 'virtual_key', 'strategy+targets', 'cache', 'retry', 'prompt_id', 'forward_headers',
      'request_timeout', 'after_request_hooks', 'before_request_hooks', 'input_guardrails', 'output_guardrails', 'passthrough', 'provider+Authorization',
    ]);
  });

  test("a stage plugin's sets go where it places them, else after the generic ones", () => {
    const set = (before?: string) => ({ plugin: 'acme-stage', fields: defineConfigFields({ fields: { acme_hint: Type.String() }, propertySets: [['acme_hint']], propertySetsBefore: before }) });
    const listed = (before?: string) => assembleConfig({ providers: [acme], strategies: [], plugins: [set(before)] }).propertySets.map((s) => s.join('+'));
    expect(listed('virtual_key').slice(0, 4)).toEqual(['provider+api_key', 'provider+custom_host', 'acme_hint', 'virtual_key']);
    // After the generic sets, before the providers' credential sets; an unknown name is no place.
    expect(listed().slice(-3)).toEqual(['provider+Authorization', 'acme_hint', 'provider+acme_tenant+acme_passphrase']);
    expect(listed('nowhere')).toEqual(listed());
  });

  test('a stage plugin may not redeclare a generic field, nor inherit a field it does not declare', () => {
    const plugin = (fields: Parameters<typeof defineConfigFields>[0]) => [{ plugin: 'acme-stage', fields }];
    expect(() => assembleConfig({ providers: [], strategies: [], plugins: plugin({ fields: { retry: Type.Number() } }) })).toThrow(
      'plugin acme-stage declares config field "retry", which is a generic field',
    );
    expect(() => assembleConfig({ providers: [], strategies: [], plugins: plugin({ fields: { acme_hint: Type.String() }, inherited: ['acme_other'] }) })).toThrow(
      'plugin acme-stage declares config field "acme_other" inherited but not among its fields',
    );
  });
});
