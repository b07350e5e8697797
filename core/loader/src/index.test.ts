import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineService, type Logger, Services, type StateStore } from '@gateway/sdk';
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
      JSON.stringify({ name: spec.name, version: '1.0.0', gateway: { api: 1, entry: './index.ts', ...spec.gateway } }),
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
        source: `export default { setup(api) { api.provide({ id: 'doubled' }, api.service({ id: 'number' }) * 2); } };`,
      },
      { name: 'producer', source: `export default { setup(api) { api.provide({ id: 'number' }, 21); } };` },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.refused).toEqual([]);
    expect(result.registry.service(defineService<number>('doubled'))).toBe(42);
  });

  test('host services are visible to plugins', async () => {
    const root = project([{ name: 'uses-db', source: `export default { setup(api) { api.provide({ id: 'seen' }, api.service({ id: 'database' })); } };` }]);
    const database = { dialect: 'sqlite' } as never;
    const result = await loadPlugins(options([root], { provide: (registry) => registry.provide(Services.database, database) }));
    expect(result.registry.optional(defineService<unknown>('seen'))).toBe(database);
  });

  test('a second provider of a service is refused at load, naming both plugins; the first keeps it', async () => {
    const root = project([
      { name: 'first', source: `export default { setup(api) { api.provide({ id: 'acme.ledger' }, 'first'); } };` },
      { name: 'second', source: `export default { setup(api) { api.provide({ id: 'acme.ledger' }, 'second'); } };` },
      { name: 'host-clash', source: `export default { setup(api) { api.provide({ id: 'database' }, 'mine'); } };` },
    ]);
    const result = await loadPlugins(options([root], { provide: (registry) => registry.provide(Services.database, 'the-db' as never) }));
    expect(result.loaded.map((p) => p.name)).toEqual(['first']);
    expect(result.refused).toEqual([
      { name: 'second', reason: 'failed to load: service "acme.ledger" from plugin second is already provided by plugin first; a service has one provider' },
      { name: 'host-clash', reason: 'failed to load: service "database" from plugin host-clash is already provided by the gateway; a service has one provider' },
    ]);
    expect(result.registry.optional(defineService<string>('acme.ledger'))).toBe('first');
  });

  test('onReady hooks run once every plugin is set up, in load order: a service of a plugin loaded later is there', async () => {
    const root = project([
      {
        name: 'early',
        source: `export default { setup(api) {
          (globalThis.__loadOrder ??= []).push('setup early');
          api.onReady(() => {
            globalThis.__loadOrder.push('ready early: ' + api.optional({ id: 'late.value' }) + ', ' + api.optional({ id: 'nobody.value' }));
          });
        } };`,
      },
      {
        name: 'late',
        source: `export default { setup(api) {
          globalThis.__loadOrder.push('setup late: ' + api.optional({ id: 'late.value' }));
          api.provide({ id: 'late.value' }, 'here');
          api.onReady(() => void globalThis.__loadOrder.push('ready late'));
        } };`,
      },
    ]);
    g.__loadOrder = [];
    const result = await loadPlugins(options([root]));
    expect(g.__loadOrder).toEqual(['setup early', 'setup late: undefined']);
    await result.registry.ready();
    expect(g.__loadOrder).toEqual(['setup early', 'setup late: undefined', 'ready early: here, undefined', 'ready late']);
    await result.registry.ready(); // once
    expect(g.__loadOrder).toHaveLength(4);
  });

  test('a refused plugin leaves no ready hook; a ready hook that throws stops the start, naming its plugin', async () => {
    const root = project([
      { name: 'refused', source: `export default { setup(api) { api.onReady(() => { throw new Error('must not run'); }); throw new Error('no'); } };` },
      { name: 'grumpy', source: `export default { setup(api) { api.onReady(async () => { throw new Error('not today'); }); } };` },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.refused.map((r) => r.name)).toEqual(['refused']);
    await expect(result.registry.ready()).rejects.toThrow('plugin grumpy failed when ready: not today');
  });

  test('services are provided in setup: a provide from a ready hook is refused', async () => {
    const root = project([{ name: 'tardy', source: `export default { setup(api) { api.onReady(() => api.provide({ id: 'tardy.value' }, 1)); } };` }]);
    const result = await loadPlugins(options([root]));
    await expect(result.registry.ready()).rejects.toThrow('plugin tardy failed when ready: plugin tardy provides service "tardy.value" after setup');
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

  test('contract refusals (api, core range) are reported with the load result', async () => {
    const root = project([
      { name: 'api-two', source: recording('api-two'), gateway: { api: 2 } },
      { name: 'new-core', source: recording('new-core'), gateway: { core: '>=2' } },
    ]);
    const result = await loadPlugins(options([root]));
    expect(result.loaded).toEqual([]);
    expect(result.refused).toEqual([
      { name: 'api-two', reason: 'declares plugin api 2, this gateway speaks api 1' },
      { name: 'new-core', reason: 'needs core >=2, this is core 1.0.0' },
    ]);
    expect(result.registry.providers.size).toBe(0);
  });

  test('with several roots, a package name found in an earlier root wins', async () => {
    const first = project([{ name: 'dup', source: `export default { setup(api) { api.provide({ id: 'which' }, 'first'); } };` }]);
    const second = project([
      { name: 'dup', source: `export default { setup(api) { api.provide({ id: 'which' }, 'second'); } };` },
      { name: 'extra', source: `export default { setup(api) { api.provide({ id: 'extra' }, true); } };` },
    ]);
    const result = await loadPlugins(options([first, second]));
    expect(result.loaded.map((p) => p.name)).toEqual(['dup', 'extra']);
    expect(result.registry.optional(defineService<string>('which'))).toBe('first');
    expect(result.registry.optional(defineService<boolean>('extra'))).toBe(true);
  });
});
