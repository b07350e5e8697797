import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PluginManifest } from '@gateway/sdk';

/** A package that carries a `"gateway"` field in its package.json. */
export interface PluginPackage {
  name: string;
  version: string;
  dir: string;
  manifest: PluginManifest;
}

interface PackageJson {
  name?: string;
  version?: string;
  workspaces?: string[] | { packages?: string[] };
  dependencies?: Record<string, string>;
  gateway?: PluginManifest;
}

function readPackage(dir: string): PackageJson | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch {
    // A malformed package.json in some folder is not a plugin; it must not stop the gateway from starting.
    return undefined;
  }
}

/** Expands workspace patterns of the form `folder/*` or `folder` (the only forms this project uses). */
function workspaceDirs(root: string, patterns: string[]): string[] {
  const dirs: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('/*')) {
      const parent = resolve(root, pattern.slice(0, -2));
      if (!existsSync(parent)) continue;
      for (const entry of readdirSync(parent, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isDirectory()) dirs.push(join(parent, entry.name));
      }
    } else {
      dirs.push(resolve(root, pattern));
    }
  }
  return dirs;
}

/** Finds an installed dependency by walking up node_modules folders, as the resolver would. */
function dependencyDir(root: string, name: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Every plugin package of a project root: its workspace folders first, then its dependencies (third-party plugins
 * added with `bun add`). A package seen twice (a workspace is also linked as a dependency) counts once.
 */
export function discoverPlugins(root: string): PluginPackage[] {
  const rootPkg = readPackage(root);
  if (!rootPkg) return [];
  const patterns = Array.isArray(rootPkg.workspaces) ? rootPkg.workspaces : (rootPkg.workspaces?.packages ?? []);
  const candidates = [
    ...workspaceDirs(root, patterns),
    ...Object.keys(rootPkg.dependencies ?? {}).flatMap((name) => dependencyDir(root, name) ?? []),
  ];
  const found = new Map<string, PluginPackage>();
  for (const dir of candidates) {
    const pkg = readPackage(dir);
    if (!pkg?.gateway || !pkg.name || found.has(pkg.name)) continue;
    found.set(pkg.name, { name: pkg.name, version: pkg.version ?? '0.0.0', dir, manifest: pkg.gateway });
  }
  return [...found.values()];
}
