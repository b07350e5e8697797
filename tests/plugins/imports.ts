/**
 * What a package's source imports, checked against what its package.json declares. Used by imports.test.ts on every
 * package under plugins/, providers/ and admin/ (the plugin side of the contract).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  gateway?: { requires?: string[] };
}

export interface Problem {
  file: string;
  problem: string;
}

/** The core's own packages: the host. A plugin reaches what they do through the SDK's contract (types and services). */
export const CORE_ONLY = ['@gateway/db', '@gateway/config', '@gateway/server', '@gateway/pipeline', '@gateway/loader', '@gateway/state', '@gateway/validation'];

/** Test code runs inside the workspace with its tools (bun:test, @gateway/db/testing): not part of what a package ships. */
export const isTestFile = (name: string): boolean => name.endsWith('.test.ts') || name === 'testing.ts' || name.startsWith('test-');

const builtins = new Set(builtinModules);

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for relative and built-in ones. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  if (specifier.startsWith('node:') || specifier.startsWith('bun:') || specifier === 'bun' || builtins.has(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every module specifier of a TypeScript file: static, type-only, re-exports and dynamic `import('…')`. */
export function specifiersOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|js|mjs)$/.test(e.name) && !isTestFile(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * What is wrong with one package: an import its package.json does not declare (`dependencies` or
 * `peerDependencies`), an import of a core package, or a `gateway.requires` entry that is not a declared dependency
 * (the plugin it must be set up after has to be installed with it).
 */
export function checkPackage(dir: string): Problem[] {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const problems: Problem[] = [];
  for (const file of sourceFiles(join(dir, 'src'))) {
    const where = relative(dir, file);
    for (const specifier of specifiersOf(readFileSync(file, 'utf8'))) {
      const name = packageOf(specifier);
      if (name === undefined || name === pkg.name) continue;
      if (CORE_ONLY.includes(name)) problems.push({ file: where, problem: `imports ${specifier}, a core package: plugins import only @gateway/sdk from the core` });
      else if (!declared.has(name)) problems.push({ file: where, problem: `imports ${specifier}, but ${name} is not in its package.json dependencies` });
    }
  }
  for (const need of pkg.gateway?.requires ?? [])
    if (!declared.has(need)) problems.push({ file: 'package.json', problem: `requires ${need}, which is not in its dependencies` });
  return problems;
}
