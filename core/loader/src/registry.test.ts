import { describe, expect, test } from 'bun:test';
import { defineService, type Logger, type ProviderAdapter, Services, type Stage, type StateStore } from '@gateway/sdk';
import { Registry } from './registry.ts';

const deps = { env: {}, logger: { debug() {}, info() {}, warn() {}, error() {} } as Logger, state: { kind: 'memory' } as unknown as StateStore };
const adapter = (id: string): ProviderAdapter => ({ id, baseUrl: () => 'http://x', authorize: (c) => c, endpoints: {} });

describe('Registry', () => {
  test('stages are kept in registration order (the pipeline orders them); none may be added after setup', async () => {
    const registry = new Registry();
    const api = registry.apiFor('p', deps);
    const stages: Stage[] = [
      { name: 'req', phase: 'request', rule: 'sequential', run() {} },
      { name: 'attempt', phase: 'attempt', rule: 'sequential', before: 'other', run: (_r, _a, next) => next() },
      { name: 'resp', phase: 'response', rule: 'sequential', run() {} },
      { name: 'log', phase: 'finally', rule: 'fire-and-forget', run() {} },
    ];
    for (const s of stages) api.stage(s);
    expect(registry.stages).toEqual(stages);
    await registry.ready();
    expect(() => api.stage({ name: 'late', phase: 'request', rule: 'sequential', run() {} })).toThrow(
      'plugin p adds stage "late" after setup; stages are added in setup',
    );
    expect(registry.stages).toHaveLength(4);
  });

  test('a provider id registered by two plugins is an error naming both; the same plugin may replace its own', () => {
    const registry = new Registry();
    registry.apiFor('first', deps).provider(adapter('acme'));
    expect(() => registry.apiFor('second', deps).provider(adapter('acme'))).toThrow(
      'provider "acme" from second is already registered by first',
    );
    const replacement = adapter('acme');
    registry.apiFor('first', deps).provider(replacement);
    expect(registry.providers.get('acme')).toBe(replacement);
    expect(registry.owners.get('acme')).toBe('first');
  });

  test('service() of an unknown service names the plugin and the service; optional() is undefined', () => {
    const registry = new Registry();
    const api = registry.apiFor('needy', deps);
    const counter = defineService<number>('needy.counter');
    expect(() => api.service(counter)).toThrow('plugin needy needs service "needy.counter", which no loaded plugin provides');
    expect(api.optional(counter)).toBeUndefined();
    api.provide(counter, 1);
    expect(api.service(counter)).toBe(1);
    // Another copy of the token (another copy of the SDK): the same service.
    expect(registry.service(defineService<number>('needy.counter'))).toBe(1);
  });

  test('the registry provides the live maps of guardrail checks and provider adapters', () => {
    const registry = new Registry();
    registry.apiFor('p', deps).provider(adapter('acme'));
    expect(registry.service(Services.providerAdapters).get('acme')?.id).toBe('acme');
    expect(registry.service(Services.guardrailChecks)).toBe(registry.guardrails);
  });

  test('strategies, guardrails, routes and closers are recorded', async () => {
    const registry = new Registry();
    const api = registry.apiFor('misc', deps);
    expect(api.name).toBe('misc');
    api.strategy({ mode: 'm', plan: () => [], next: () => false });
    api.guardrail({ id: 'misc.check', run: async () => ({ verdict: true }) });
    const route = { method: 'GET' as const, path: '/things', scope: 'things.read', handle: () => new Response('ok') };
    api.route(route);
    let closed = 0;
    api.onClose(() => void closed++);
    expect(registry.strategies.has('m')).toBe(true);
    expect(registry.guardrails.has('misc.check')).toBe(true);
    expect(registry.routes).toEqual([{ plugin: 'misc', route }]);
    for (const fn of registry.closers) await fn();
    expect(closed).toBe(1);
  });
});
