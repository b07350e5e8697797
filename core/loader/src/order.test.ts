import { describe, expect, test } from 'bun:test';
import type { PluginManifest } from '@gateway/sdk';
import type { PluginPackage } from './discover.ts';
import { checkAndOrder } from './order.ts';

const CORE = '1.4.2';

function pkg(name: string, manifest: Partial<PluginManifest> & Record<string, unknown> = {}): PluginPackage {
  return {
    name,
    version: '1.0.0',
    dir: `/plugins/${name}`,
    manifest: { api: 1, entry: './index.ts', ...manifest } as PluginManifest,
  };
}

const names = (list: { name: string }[]) => list.map((p) => p.name);
const reasonOf = (refused: { name: string; reason: string }[], name: string) => refused.find((r) => r.name === name)?.reason;

describe('checkAndOrder: refusals', () => {
  test('a plugin declaring another api version is refused with a message naming both versions', () => {
    const { ordered, refused } = checkAndOrder([pkg('future', { api: 2 }), pkg('ok')], CORE, new Set());
    expect(names(ordered)).toEqual(['ok']);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.name).toBe('future');
    expect(refused[0]?.reason).toBe('declares plugin api 2, this gateway speaks api 1');
  });

  test('a missing api field is refused too', () => {
    const { refused } = checkAndOrder([pkg('no-api', { api: undefined })], CORE, new Set());
    expect(reasonOf(refused, 'no-api')).toContain('declares plugin api undefined');
  });

  test('a "kind" left in a manifest is ignored: a plugin is what it registers', () => {
    const { ordered, refused } = checkAndOrder([pkg('old', { kind: 'stage' }), pkg('odd', { kind: 'widget' })], CORE, new Set());
    expect(refused).toEqual([]);
    expect(names(ordered)).toEqual(['old', 'odd']);
  });

  test('a plugin without an entry is refused', () => {
    const { refused } = checkAndOrder([pkg('no-entry', { entry: '' }), pkg('no-entry-2', { entry: undefined })], CORE, new Set());
    expect(reasonOf(refused, 'no-entry')).toBe('has no "entry"');
    expect(reasonOf(refused, 'no-entry-2')).toBe('has no "entry"');
  });

  test('an unmet core semver range is refused with the range and the core version', () => {
    const { ordered, refused } = checkAndOrder(
      [pkg('needs-2', { core: '^2.0.0' }), pkg('needs-old', { core: '<1.0.0' }), pkg('fits', { core: '^1.2.0' }), pkg('fits-range', { core: '>=1.4.0 <1.5.0' })],
      CORE,
      new Set(),
    );
    expect(names(ordered)).toEqual(['fits', 'fits-range']);
    expect(reasonOf(refused, 'needs-2')).toBe('needs core ^2.0.0, this is core 1.4.2');
    expect(reasonOf(refused, 'needs-old')).toBe('needs core <1.0.0, this is core 1.4.2');
  });

  test('a missing requirement refuses the plugin and names the requirement', () => {
    const { ordered, refused } = checkAndOrder([pkg('a', { requires: ['ghost'] })], CORE, new Set());
    expect(ordered).toEqual([]);
    expect(reasonOf(refused, 'a')).toBe('requires ghost, which is not installed or was refused');
  });

  test('a requirement that was itself refused refuses the plugin that needs it (transitively)', () => {
    const { ordered, refused } = checkAndOrder(
      [pkg('top', { requires: ['mid'] }), pkg('mid', { requires: ['bad'] }), pkg('bad', { api: 99 })],
      CORE,
      new Set(),
    );
    expect(ordered).toEqual([]);
    expect(reasonOf(refused, 'bad')).toContain('api 99');
    expect(reasonOf(refused, 'mid')).toContain('requires bad');
    expect(reasonOf(refused, 'top')).toContain('requires mid');
  });

  test('a requirement cycle refuses every plugin in it, and one message spells the cycle', () => {
    const { ordered, refused } = checkAndOrder(
      [pkg('a', { requires: ['b'] }), pkg('b', { requires: ['c'] }), pkg('c', { requires: ['a'] }), pkg('free')],
      CORE,
      new Set(),
    );
    expect(names(ordered)).toEqual(['free']);
    expect(names(refused).sort()).toEqual(['a', 'b', 'c']);
    expect(refused.some((r) => r.reason === 'requirement cycle: a -> b -> c -> a')).toBe(true);
    // each plugin is refused once
    expect(new Set(names(refused)).size).toBe(refused.length);
  });

  test('a plugin that requires itself is a cycle', () => {
    const { ordered, refused } = checkAndOrder([pkg('selfish', { requires: ['selfish'] })], CORE, new Set());
    expect(ordered).toEqual([]);
    expect(reasonOf(refused, 'selfish')).toContain('requirement cycle');
  });

  test('a plugin whose requirement is disabled is refused with a message that says so', () => {
    const { ordered, refused, skipped } = checkAndOrder([pkg('db'), pkg('logs', { requires: ['db'] })], CORE, new Set(['db']));
    expect(ordered).toEqual([]);
    expect(skipped).toEqual(['db']);
    expect(reasonOf(refused, 'logs')).toBe('requires db, which is disabled');
  });
});

describe('checkAndOrder: ordering and disabling', () => {
  test('orders every plugin after what it requires, keeping discovery order otherwise', () => {
    const { ordered, refused } = checkAndOrder(
      [pkg('app', { requires: ['logs', 'auth'] }), pkg('logs', { requires: ['db'] }), pkg('other'), pkg('auth', { requires: ['db'] }), pkg('db')],
      CORE,
      new Set(),
    );
    expect(refused).toEqual([]);
    const order = names(ordered);
    expect(order).toHaveLength(5);
    const at = (n: string) => order.indexOf(n);
    expect(at('db')).toBeLessThan(at('logs'));
    expect(at('db')).toBeLessThan(at('auth'));
    expect(at('logs')).toBeLessThan(at('app'));
    expect(at('auth')).toBeLessThan(at('app'));
    expect(order).toEqual(['db', 'logs', 'auth', 'app', 'other']);
  });

  test('a diamond loads its shared requirement once', () => {
    const { ordered } = checkAndOrder(
      [pkg('top', { requires: ['l', 'r'] }), pkg('l', { requires: ['base'] }), pkg('r', { requires: ['base'] }), pkg('base')],
      CORE,
      new Set(),
    );
    expect(names(ordered)).toEqual(['base', 'l', 'r', 'top']);
  });

  test('disabled plugins are skipped by name, not refused, and not checked', () => {
    const { ordered, refused, skipped } = checkAndOrder([pkg('a'), pkg('b', { api: 7 }), pkg('c')], CORE, new Set(['b', 'c']));
    expect(names(ordered)).toEqual(['a']);
    expect(skipped).toEqual(['b', 'c']);
    expect(refused).toEqual([]);
  });

  test('a disabled name that matches no plugin changes nothing', () => {
    const { ordered, skipped } = checkAndOrder([pkg('a')], CORE, new Set(['nope']));
    expect(names(ordered)).toEqual(['a']);
    expect(skipped).toEqual([]);
  });
});
