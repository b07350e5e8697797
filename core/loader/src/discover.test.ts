import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverPlugins } from './discover.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'gw-discover-')));
  dirs.push(dir);
  return dir;
}

function writePackage(dir: string, pkg: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
}

const manifest = (entry = './index.ts') => ({ api: 1, entry });

describe('discoverPlugins', () => {
  test('finds plugin packages in `folder/*` workspace folders, in name order, and skips packages without "gateway"', () => {
    const root = tempDir();
    writePackage(root, { name: 'root', private: true, workspaces: ['providers/*', 'plugins/*'] });
    writePackage(join(root, 'providers', 'zeta'), { name: '@x/zeta', version: '2.0.0', gateway: manifest() });
    writePackage(join(root, 'providers', 'alpha'), { name: '@x/alpha', version: '1.0.0', gateway: manifest() });
    writePackage(join(root, 'providers', 'plain'), { name: '@x/plain', version: '1.0.0' }); // not a plugin
    mkdirSync(join(root, 'providers', 'empty-folder')); // no package.json at all
    writePackage(join(root, 'plugins', 'cache'), { name: '@x/cache', gateway: manifest('./cache.ts') });

    const found = discoverPlugins(root);
    expect(found.map((p) => p.name)).toEqual(['@x/alpha', '@x/zeta', '@x/cache']);
    expect(found[0]).toEqual({ name: '@x/alpha', version: '1.0.0', dir: join(root, 'providers', 'alpha'), manifest: manifest() as never });
    // a package without a version gets 0.0.0
    expect(found[2]?.version).toBe('0.0.0');
    expect(found[2]?.manifest.entry).toBe('./cache.ts');
  });

  test('accepts a plain folder workspace pattern and the `{ packages: [...] }` workspaces form', () => {
    const root = tempDir();
    writePackage(root, { name: 'root', workspaces: { packages: ['tools/one', 'missing/*'] } });
    writePackage(join(root, 'tools', 'one'), { name: 'one', gateway: manifest() });
    expect(discoverPlugins(root).map((p) => p.name)).toEqual(['one']);
  });

  test('finds plugin packages among the root package.json dependencies, installed in node_modules', () => {
    const root = tempDir();
    writePackage(root, {
      name: 'root',
      dependencies: { 'acme-provider': '1.0.0', '@scope/guard': '1.0.0', 'left-pad': '1.0.0', 'not-installed': '1.0.0' },
    });
    writePackage(join(root, 'node_modules', 'acme-provider'), { name: 'acme-provider', version: '1.2.3', gateway: manifest() });
    writePackage(join(root, 'node_modules', '@scope', 'guard'), { name: '@scope/guard', version: '0.1.0', gateway: manifest('./guard.ts') });
    writePackage(join(root, 'node_modules', 'left-pad'), { name: 'left-pad', version: '1.0.0' });

    const found = discoverPlugins(root);
    expect(found.map((p) => p.name)).toEqual(['acme-provider', '@scope/guard']);
    expect(found[0]?.dir).toBe(join(root, 'node_modules', 'acme-provider'));
    expect(found[1]?.manifest.entry).toBe('./guard.ts');
  });

  test('looks for a dependency in the node_modules of parent folders, as the resolver does', () => {
    const outer = tempDir();
    const root = join(outer, 'apps', 'gateway');
    writePackage(root, { name: 'gw', dependencies: { hoisted: '1.0.0' } });
    writePackage(join(outer, 'node_modules', 'hoisted'), { name: 'hoisted', gateway: manifest() });
    expect(discoverPlugins(root).map((p) => p.dir)).toEqual([join(outer, 'node_modules', 'hoisted')]);
  });

  test('workspace folders come before dependencies, and a package seen twice counts once (the workspace copy)', () => {
    const root = tempDir();
    writePackage(root, { name: 'root', workspaces: ['providers/*'], dependencies: { 'dep-plugin': '1.0.0', shared: 'workspace:*' } });
    writePackage(join(root, 'providers', 'shared'), { name: 'shared', gateway: manifest() });
    writePackage(join(root, 'node_modules', 'shared'), { name: 'shared', gateway: manifest() });
    writePackage(join(root, 'node_modules', 'dep-plugin'), { name: 'dep-plugin', gateway: manifest() });

    const found = discoverPlugins(root);
    expect(found.map((p) => p.name)).toEqual(['shared', 'dep-plugin']);
    expect(found[0]?.dir).toBe(join(root, 'providers', 'shared'));
  });

  test('a root without package.json has no plugins', () => {
    expect(discoverPlugins(tempDir())).toEqual([]);
  });

  test('ignores packages that have a "gateway" field but no name', () => {
    const root = tempDir();
    writePackage(root, { name: 'root', workspaces: ['p/*'] });
    writePackage(join(root, 'p', 'anon'), { gateway: manifest() });
    expect(discoverPlugins(root)).toEqual([]);
  });
});
