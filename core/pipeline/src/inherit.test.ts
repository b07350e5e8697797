import { describe, expect, test } from 'bun:test';
import type { GatewayConfig } from '@gateway/sdk';
import { GENERIC_INHERITANCE, Inheritance } from './inherit.ts';

// The cache's and the circuit breaker's fields, declared inherited by their plugins (`ConfigFieldSet.inherited`).
const withPlugins = new Inheritance(['cache', 'cb_config']);
const inherit = (parent: GatewayConfig, child: GatewayConfig) => withPlugins.inherit(parent, child);
const effectiveTargets = (node: GatewayConfig) => withPlugins.targets(node);

describe('inherit', () => {
  test('a child takes the parent settings it does not set itself', () => {
    const parent: GatewayConfig = {
      retry: { attempts: 3 },
      cache: { mode: 'simple', max_age: 60 },
      request_timeout: 5000,
      custom_host: 'http://parent.example/v1',
      forward_headers: ['x-team'],
      strict_wire_compliance: false,
      drop_params: ['user'],
      cb_config: { failure_threshold: 3, cooldown_interval: 30000 },
    };
    const child = inherit(parent, { provider: 'openai', api_key: 'k' });
    expect(child).toEqual({ ...parent, provider: 'openai', api_key: 'k' });
  });

  test('a plugin field is inherited only when a loaded plugin declares it so', () => {
    const parent: GatewayConfig = { cache: { mode: 'simple' }, cb_config: { failure_threshold: 3, cooldown_interval: 30000 }, retry: { attempts: 1 } };
    expect(GENERIC_INHERITANCE.inherit(parent, { provider: 'p' })).toEqual({ provider: 'p', retry: { attempts: 1 } });
    expect(new Inheritance(['cache']).inherit(parent, { provider: 'p' })).toEqual({ provider: 'p', retry: { attempts: 1 }, cache: { mode: 'simple' } });
    expect(new Inheritance(['acme_region']).inherit({ acme_region: 'north' } as GatewayConfig, { provider: 'p' })).toEqual({ provider: 'p', acme_region: 'north' } as GatewayConfig);
  });

  test('the child wins wherever it sets a value', () => {
    const parent: GatewayConfig = { retry: { attempts: 3 }, request_timeout: 5000, drop_params: ['user'], strict_wire_compliance: false };
    const child = inherit(parent, { provider: 'p', retry: { attempts: 0 }, request_timeout: 10, drop_params: [], strict_wire_compliance: true });
    expect(child.retry).toEqual({ attempts: 0 });
    expect(child.request_timeout).toBe(10);
    expect(child.drop_params).toEqual([]);
    expect(child.strict_wire_compliance).toBe(true);
  });

  test('override_params and default_params are merged key by key, the child winning', () => {
    const parent: GatewayConfig = {
      override_params: { model: 'parent-model', temperature: 0.1 },
      default_params: { max_tokens: 10, seed: 1 },
    };
    const child = inherit(parent, { override_params: { model: 'child-model', top_p: 0.5 }, default_params: { seed: 2 } });
    expect(child.override_params).toEqual({ model: 'child-model', temperature: 0.1, top_p: 0.5 });
    expect(child.default_params).toEqual({ max_tokens: 10, seed: 2 });
  });

  test('a child without override_params takes the parent object', () => {
    const child = inherit({ override_params: { model: 'x' } }, { provider: 'p' });
    expect(child.override_params).toEqual({ model: 'x' });
  });

  test('what is not inherited stays with the parent: routing, identity and credentials', () => {
    const parent: GatewayConfig = {
      strategy: { mode: 'fallback', on_status_codes: [429] },
      targets: [{ provider: 'a' }],
      name: 'root',
      provider: 'openai',
      api_key: 'parent-key',
      weight: 3,
      on_status_codes: [500],
    };
    const child = inherit(parent, { provider: 'anthropic' });
    expect(child).toEqual({ provider: 'anthropic' });
  });

  test('neither parent nor child is mutated; a child that inherits nothing is returned as is', () => {
    const parent: GatewayConfig = Object.freeze({ retry: Object.freeze({ attempts: 1 }), override_params: Object.freeze({ a: 1 }) });
    const childIn: GatewayConfig = Object.freeze({ provider: 'p', override_params: Object.freeze({ b: 2 }) });
    const out = inherit(parent, childIn);
    expect(out).not.toBe(childIn);
    expect(childIn).toEqual({ provider: 'p', override_params: { b: 2 } });
    expect(parent).toEqual({ retry: { attempts: 1 }, override_params: { a: 1 } });
    const bare = { provider: 'q' };
    expect(inherit({ name: 'x' }, bare)).toBe(bare);
  });
});

describe('effectiveTargets', () => {
  test('applies inheritance to every child, and once per node object', () => {
    const node: GatewayConfig = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 2 },
      targets: [{ provider: 'a' }, { provider: 'b', retry: { attempts: 0 } }],
    };
    const children = effectiveTargets(node);
    expect(children).toEqual([
      { provider: 'a', retry: { attempts: 2 } },
      { provider: 'b', retry: { attempts: 0 } },
    ]);
    expect(effectiveTargets(node)).toBe(children);
  });

  test('inheritance chains down levels: a grandchild sees what its parent inherited', () => {
    const root: GatewayConfig = {
      strategy: { mode: 'fallback' },
      request_timeout: 1000,
      override_params: { model: 'root' },
      targets: [{ strategy: { mode: 'loadbalance' }, override_params: { seed: 1 }, targets: [{ provider: 'leaf', override_params: { seed: 2 } }] }],
    };
    const [mid] = effectiveTargets(root);
    const [leaf] = effectiveTargets(mid as GatewayConfig);
    expect(leaf).toEqual({ provider: 'leaf', request_timeout: 1000, override_params: { model: 'root', seed: 2 } });
  });

  test('a node without targets has no children', () => {
    expect(effectiveTargets({ provider: 'x' })).toEqual([]);
  });
});
