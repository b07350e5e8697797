import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger, StateStore } from '@gateway/sdk';
import { loadPlugins, type LoadOptions } from './index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const state = { kind: 'memory' } as unknown as StateStore;

interface Spec {
  name: string;
  source: string;
  gateway?: Record<string, unknown>;
}

/** A project root with one workspace folder per plugin; each plugin's entry is the given source. */
function project(specs: Spec[]): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'gw-load-')));
  dirs.push(root);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'root', private: true, workspaces: ['plugins/*'] }));
  specs.forEach((spec, i) => {
    // folder names keep discovery order equal to the order given
    const dir = join(root, 'plugins', `${String(i).padStart(2, '0')}-${spec.name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: spec.name, version: '1.0.0', gateway: { kind: 'stage', api: 1, entry: './index.ts', ...spec.gateway } }),
    );
    writeFileSync(join(dir, 'index.ts'), spec.source);
  });
  return root;
}

function options(roots: string[], extra: Partial<LoadOptions> = {}): LoadOptions {
  return { roots, coreVersion: '1.0.0', env: {}, logger: silent, state, ...extra };
}

/** Source of a plugin that records its setup in `globalThis.__loadOrder` and registers a provider of its own name. */
const recording = (name: string) => `
  export default {
    setup(api) {
      (globalThis.__loadOrder ??= []).push(api.name);
      api.provider({ id: ${JSON.stringify(name)}, baseUrl: () => 'http://x', authorize: (c) => c, endpoints: {} });
    },
  };
`;

const g = globalThis as { __loadOrder?: string[] };

describe('loadPlugins', () => {
  test('sets plugins up in requirement order and hands each its own name', async () => {
    g.__loadOrder = [];
    const root = project([
      { name: 'top', source: recording('top'), gateway: { requires: ['base'] } },
      { name: 'base', source: recording('base') },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.refused).toEqual([]);
    expect(result.loaded.map((p) => p.name)).toEqual(['base', 'top']);
    expect(g.__loadOrder).toEqual(['base', 'top']);
    expect([...result.registry.providers.keys()]).toEqual(['base', 'top']);
    expect(result.registry.owners.get('top')).toBe('top');
  });

  test('a required plugin provides a service that the plugin requiring it can use during setup', async () => {
    const root = project([
      {
        name: 'consumer',
        gateway: { requires: ['producer'] },
        source: `export default { setup(api) { api.provide('doubled', api.service('number') * 2); } };`,
      },
      { name: 'producer', source: `export default { setup(api) { api.provide('number', 21); } };` },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.refused).toEqual([]);
    expect(result.registry.services.get('doubled')).toBe(42);
  });

  test('host services are visible to plugins', async () => {
    const root = project([{ name: 'uses-db', source: `export default { setup(api) { api.provide('seen', api.service('database')); } };` }]);
    const result = await loadPlugins(options([root], { services: { database: 'the-db' } }));
    expect(result.registry.services.get('seen')).toBe('the-db');
  });

  test('a plugin whose entry throws on import is refused, and the others still load', async () => {
    const root = project([
      { name: 'broken', source: `throw new Error('boom at import');` },
      { name: 'fine', source: recording('fine') },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded.map((p) => p.name)).toEqual(['fine']);
    expect(result.refused).toEqual([{ name: 'broken', reason: 'failed to load: boom at import' }]);
  });

  test('a plugin whose setup throws (or rejects) is refused, not fatal', async () => {
    const root = project([
      { name: 'sync-throw', source: `export default { setup() { throw new Error('no setup for you'); } };` },
      { name: 'async-reject', source: `export default { async setup() { await Promise.resolve(); throw new Error('later'); } };` },
      { name: 'fine', source: recording('fine-2') },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded.map((p) => p.name)).toEqual(['fine']);
    expect(result.refused.find((r) => r.name === 'sync-throw')?.reason).toBe('failed to load: no setup for you');
    expect(result.refused.find((r) => r.name === 'async-reject')?.reason).toBe('failed to load: later');
  });

  test('an entry without a plugin default export is refused with a message that says what is missing', async () => {
    const root = project([
      { name: 'no-default', source: `export const x = 1;` },
      { name: 'no-setup', source: `export default { hello: 1 };` },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded).toEqual([]);
    for (const name of ['no-default', 'no-setup'])
      expect(result.refused.find((r) => r.name === name)?.reason).toContain('no default export made with definePlugin({ setup })');
  });

  test('an entry file that does not exist is refused', async () => {
    const root = project([{ name: 'missing-entry', source: '', gateway: { entry: './nowhere.ts' } }]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded).toEqual([]);
    expect(result.refused[0]?.name).toBe('missing-entry');
    expect(result.refused[0]?.reason).toStartWith('failed to load:');
  });

  test('a plugin whose requirement failed to load is refused as well', async () => {
    const root = project([
      { name: 'dependent', source: recording('dependent'), gateway: { requires: ['fragile'] } },
      { name: 'fragile', source: `throw new Error('nope');` },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded).toEqual([]);
    expect(result.refused.find((r) => r.name === 'dependent')?.reason).toBe('requires fragile, which failed to load');
    expect(result.registry.providers.has('dependent')).toBe(false);
  });

  test('a refused plugin leaves nothing behind: what its setup registered before it threw is not live', async () => {
    // A plugin is either loaded whole or refused; a half-registered provider would serve requests for a plugin
    // that the start-up listing reports as refused.
    const root = project([
      {
        name: 'half',
        source: `export default { setup(api) {
          api.provider({ id: 'half', baseUrl: () => 'http://x', authorize: (c) => c, endpoints: {} });
          api.strategy({ mode: 'half-mode', plan: () => [0], next: () => false });
          throw new Error('failed after registering');
        } };`,
      },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.refused.map((r) => r.name)).toEqual(['half']);
    expect(result.registry.providers.has('half')).toBe(false);
    expect(result.registry.strategies.has('half-mode')).toBe(false);
  });

  test('disabled plugins are skipped by name and never imported', async () => {
    g.__loadOrder = [];
    const root = project([
      { name: 'keep', source: recording('keep') },
      { name: 'drop-me', source: `globalThis.__loadOrder.push('imported drop-me'); export default { setup() {} };` },
    ]);
    const result = await loadPlugins(options([root], { disabled: ['drop-me'] }));
    expect(result.loaded.map((p) => p.name)).toEqual(['keep']);
    expect(result.skipped).toEqual(['drop-me']);
    expect(g.__loadOrder).toEqual(['keep']);
  });

  test('contract refusals (api, kind, core range) are reported with the load result', async () => {
    const root = project([
      { name: 'api-two', source: recording('api-two'), gateway: { api: 2 } },
      { name: 'odd-kind', source: recording('odd-kind'), gateway: { kind: 'gizmo' } },
      { name: 'new-core', source: recording('new-core'), gateway: { core: '>=2' } },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded).toEqual([]);
    expect(result.refused).toEqual([
      { name: 'api-two', reason: 'declares plugin api 2, this gateway speaks api 1' },
      { name: 'odd-kind', reason: 'unknown plugin kind "gizmo"' },
      { name: 'new-core', reason: 'needs core >=2, this is core 1.0.0' },
    ]);
    expect(result.registry.providers.size).toBe(0);
  });

  test('with several roots, a package name found in an earlier root wins', async () => {
    const first = project([{ name: 'dup', source: `export default { setup(api) { api.provide('which', 'first'); } };` }]);
    const second = project([
      { name: 'dup', source: `export default { setup(api) { api.provide('which', 'second'); } };` },
      { name: 'extra', source: `export default { setup(api) { api.provide('extra', true); } };` },
    ]);
    const result = await loadPlugins(options([first, second]));
    expect(result.loaded.map((p) => p.name)).toEqual(['dup', 'extra']);
    expect(result.registry.services.get('which')).toBe('first');
    expect(result.registry.services.get('extra')).toBe(true);
  });
});
