// Plugins import only the SDK from the core, and each package declares what it imports: the workspace hoists every
// package into one node_modules, so an undeclared import works here and breaks for whoever installs the package alone.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPackage, packageOf, specifiersOf } from './imports.ts';

const ROOT = join(import.meta.dir, '..', '..');
const PACKAGES = ['plugins', 'providers', 'admin'].flatMap((group) =>
  readdirSync(join(ROOT, group), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `${group}/${e.name}`),
);

describe('plugin packages declare what they import', () => {
  test('there are packages to check', () => {
    expect(PACKAGES.length).toBeGreaterThan(40);
  });

  for (const dir of PACKAGES) {
    test(`${dir}: every import declared, no core package but the SDK, every requires a dependency`, () => {
      expect(checkPackage(join(ROOT, dir))).toEqual([]);
    });
  }
});

describe('the check itself', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'gateway-imports-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  test('a plugin that imports what it does not declare, or a core package, fails; test files and built-ins do not count', () => {
    mkdirSync(join(fixture, 'src', 'lib'), { recursive: true });
    const pkg = {
      name: '@acme/gateway-plugin',
      peerDependencies: { '@gateway/sdk': '^1.0.0' },
      dependencies: { 'left-pad': '1.3.0' },
      gateway: { api: 1, entry: './src/index.ts', requires: ['@gateway/admin-identity'] },
    };
    writeFileSync(join(fixture, 'package.json'), JSON.stringify(pkg));
    writeFileSync(
      join(fixture, 'src', 'index.ts'),
      [
        "import { definePlugin } from '@gateway/sdk';",
        "import type { ReaderOptions } from '@gateway/db';",
        "import pad from 'left-pad/sub/path.js';",
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'path';",
        "import './lib/helper.ts';",
        "export { RE2JS } from 're2js';",
        'export default definePlugin({ setup: async () => void (await import(\'jose\')) });',
      ].join('\n'),
    );
    writeFileSync(join(fixture, 'src', 'lib', 'helper.ts'), "import { Type } from '@sinclair/typebox';\n");
    writeFileSync(join(fixture, 'src', 'index.test.ts'), "import { expect } from 'bun:test';\nimport 'only-in-tests';\n");

    expect(checkPackage(fixture)).toEqual([
      { file: 'src/index.ts', problem: 'imports @gateway/db, a core package: plugins import only @gateway/sdk from the core' },
      { file: 'src/index.ts', problem: 'imports re2js, but re2js is not in its package.json dependencies' },
      { file: 'src/index.ts', problem: 'imports jose, but jose is not in its package.json dependencies' },
      { file: 'src/lib/helper.ts', problem: 'imports @sinclair/typebox, but @sinclair/typebox is not in its package.json dependencies' },
      { file: 'package.json', problem: 'requires @gateway/admin-identity, which is not in its dependencies' },
    ]);

    // Declared, the same package passes (a core package never does).
    pkg.dependencies = { ...pkg.dependencies, re2js: '2', jose: '6', '@sinclair/typebox': '0', '@gateway/admin-identity': '0.1.0' } as typeof pkg.dependencies;
    writeFileSync(join(fixture, 'package.json'), JSON.stringify(pkg));
    expect(checkPackage(fixture)).toEqual([
      { file: 'src/index.ts', problem: 'imports @gateway/db, a core package: plugins import only @gateway/sdk from the core' },
    ]);
  });

  test('specifiers: type-only, re-exports and dynamic imports are all seen; a package is named without its subpath', () => {
    expect(specifiersOf("import type { A } from 'a';\nexport * from '@s/b/c';\nconst c = await import('c');")).toEqual(['a', '@s/b/c', 'c']);
    expect(['@s/b/c', 'left-pad/x.js', './rel.ts', 'node:fs', 'bun:test', 'fs', 'bun'].map(packageOf)).toEqual([
      '@s/b',
      'left-pad',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
