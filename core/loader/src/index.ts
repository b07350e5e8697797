import { join } from 'node:path';
import type { GatewayPlugin, Logger, StateStore } from '@gateway/sdk';
import { discoverPlugins, type PluginPackage } from './discover.ts';
import { checkAndOrder, type Refusal } from './order.ts';
import { HOST, Registry } from './registry.ts';

export { discoverPlugins, checkAndOrder, HOST, Registry };
export type { PluginPackage, Refusal };

export interface LoadOptions {
  /** Project roots to discover plugins in (workspace folders and dependencies of each). */
  roots: string[];
  coreVersion: string;
  /** Plugin package names not to load (GATEWAY_DISABLED_PLUGINS). */
  disabled?: Iterable<string>;
  env: Record<string, string | undefined>;
  logger: Logger;
  state: StateStore;
  /** Provides the host's services (`Services.database`, …) before any plugin is set up. */
  provide?(registry: Registry): void;
}

export interface LoadResult {
  registry: Registry;
  loaded: PluginPackage[];
  refused: Refusal[];
  skipped: string[];
}

function isPlugin(value: unknown): value is GatewayPlugin {
  return typeof value === 'object' && value !== null && typeof (value as GatewayPlugin).setup === 'function';
}

/**
 * Discovers, checks, orders and sets up every plugin. A plugin that fails to load is refused, not fatal. The host
 * then provides what needs the loaded plugins and calls `registry.ready()` before it serves.
 */
export async function loadPlugins(opts: LoadOptions): Promise<LoadResult> {
  const seen = new Map<string, PluginPackage>();
  for (const root of opts.roots) for (const pkg of discoverPlugins(root)) if (!seen.has(pkg.name)) seen.set(pkg.name, pkg);
  const { ordered, refused, skipped } = checkAndOrder([...seen.values()], opts.coreVersion, new Set(opts.disabled ?? []));

  const registry = new Registry();
  opts.provide?.(registry);
  const loaded: PluginPackage[] = [];
  const failed = new Set<string>();
  for (const pkg of ordered) {
    const missing = (pkg.manifest.requires ?? []).find((need) => failed.has(need));
    if (missing) {
      refused.push({ name: pkg.name, reason: `requires ${missing}, which failed to load` });
      failed.add(pkg.name);
      continue;
    }
    const restore = registry.snapshot();
    try {
      const mod = (await import(join(pkg.dir, pkg.manifest.entry))) as { default?: unknown };
      if (!isPlugin(mod.default)) throw new Error('its entry has no default export made with definePlugin({ setup })');
      await mod.default.setup(registry.apiFor(pkg.name, opts));
      loaded.push(pkg);
    } catch (error) {
      restore(); // whatever it registered before failing goes too
      refused.push({ name: pkg.name, reason: `failed to load: ${error instanceof Error ? error.message : String(error)}` });
      failed.add(pkg.name);
    }
  }
  return { registry, loaded, refused, skipped };
}
