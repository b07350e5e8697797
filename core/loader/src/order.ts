import { PLUGIN_API_VERSION } from '@gateway/sdk';
import type { PluginPackage } from './discover.ts';

export interface Refusal {
  name: string;
  reason: string;
}

/**
 * Checks each plugin against the contract and orders them so that every plugin comes after what it requires.
 * Refused plugins (wrong api, no entry, core range not met, missing or refused requirement, cycle) are
 * reported, never loaded.
 */
export function checkAndOrder(
  packages: PluginPackage[],
  coreVersion: string,
  disabled: ReadonlySet<string>,
): { ordered: PluginPackage[]; refused: Refusal[]; skipped: string[] } {
  const refused: Refusal[] = [];
  const skipped: string[] = [];
  const eligible = new Map<string, PluginPackage>();
  for (const pkg of packages) {
    const m = pkg.manifest;
    if (disabled.has(pkg.name)) skipped.push(pkg.name);
    else if (m.api !== PLUGIN_API_VERSION)
      refused.push({ name: pkg.name, reason: `declares plugin api ${String(m.api)}, this gateway speaks api ${PLUGIN_API_VERSION}` });
    else if (typeof m.entry !== 'string' || m.entry === '') refused.push({ name: pkg.name, reason: 'has no "entry"' });
    else if (m.core && !Bun.semver.satisfies(coreVersion, m.core))
      refused.push({ name: pkg.name, reason: `needs core ${m.core}, this is core ${coreVersion}` });
    else eligible.set(pkg.name, pkg);
  }

  const ordered: PluginPackage[] = [];
  const state = new Map<string, 'visiting' | 'done' | 'refused'>();
  const visit = (pkg: PluginPackage, chain: string[]): boolean => {
    const seen = state.get(pkg.name);
    if (seen === 'done') return true;
    if (seen === 'refused') return false;
    if (seen === 'visiting') {
      refused.push({ name: pkg.name, reason: `requirement cycle: ${[...chain, pkg.name].join(' -> ')}` });
      state.set(pkg.name, 'refused');
      return false;
    }
    state.set(pkg.name, 'visiting');
    for (const need of pkg.manifest.requires ?? []) {
      const dep = eligible.get(need);
      const why = !dep
        ? disabled.has(need)
          ? `requires ${need}, which is disabled`
          : `requires ${need}, which is not installed or was refused`
        : visit(dep, [...chain, pkg.name])
          ? undefined
          : `requires ${need}, which was refused`;
      if (why) {
        if (state.get(pkg.name) !== 'refused') refused.push({ name: pkg.name, reason: why });
        state.set(pkg.name, 'refused');
        return false;
      }
    }
    state.set(pkg.name, 'done');
    ordered.push(pkg);
    return true;
  };
  for (const pkg of eligible.values()) visit(pkg, []);
  return { ordered, refused, skipped };
}
