/**
 * API-key settings (SPEC.md "API keys (administration)"): `user_api_key_auto_create` and
 * `user_api_key_rotation_period` per organisation with workspace overrides, `user_api_key_ttl` per workspace only.
 * A workspace override may be null (no enforced rotation, no expiry in this workspace); `inherit` drops overrides.
 */
import type { KeySettings, RotationPeriod } from '@gateway/admin-kit';
import type { Json } from '@gateway/sdk';
import { objectBody, type Problem, throwProblems } from './body.ts';
import type { SettingsChange } from './security.ts';

export const KEY_SETTING_DEFAULTS: Readonly<KeySettings> = Object.freeze({
  user_api_key_auto_create: false,
  user_api_key_rotation_period: null,
  user_api_key_ttl: null,
});

export const ROTATION_PERIODS: readonly RotationPeriod[] = ['weekly', 'monthly'];
export const MIN_USER_KEY_TTL_SECONDS = 60;

type KeySettingName = keyof KeySettings;
const ORGANISATION_KEYS: readonly KeySettingName[] = ['user_api_key_auto_create', 'user_api_key_rotation_period'];
export const WORKSPACE_KEY_SETTINGS: readonly KeySettingName[] = [...ORGANISATION_KEYS, 'user_api_key_ttl'];

const isRotation = (value: unknown): value is RotationPeriod => value === 'weekly' || value === 'monthly';
const isTtl = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= MIN_USER_KEY_TTL_SECONDS;

/** Copies the valid stored values of `keys` over `target`; an explicit null counts (it is a value, not "unset"). */
function apply(target: KeySettings, stored: Readonly<Record<string, Json>> | undefined, keys: readonly KeySettingName[]): void {
  if (!stored) return;
  for (const key of keys) {
    if (!Object.hasOwn(stored, key)) continue;
    const value = stored[key];
    if (key === 'user_api_key_auto_create' && typeof value === 'boolean') target.user_api_key_auto_create = value;
    if (key === 'user_api_key_rotation_period' && (value === null || isRotation(value))) target.user_api_key_rotation_period = value;
    if (key === 'user_api_key_ttl' && (value === null || isTtl(value))) target.user_api_key_ttl = value;
  }
}

/** Defaults, the organisation's values, then the workspace's overrides. */
export function effectiveKeySettings(
  organisation: Readonly<Record<string, Json>> | undefined,
  workspace: Readonly<Record<string, Json>> | undefined,
): KeySettings {
  const settings: KeySettings = { ...KEY_SETTING_DEFAULTS };
  apply(settings, organisation, ORGANISATION_KEYS);
  apply(settings, workspace, WORKSPACE_KEY_SETTINGS);
  return settings;
}

/** The overrides a workspace row holds, with their stored (possibly null) values. */
export function keyOverrides(stored: Readonly<Record<string, Json>> | undefined): Partial<KeySettings> {
  const out: Partial<KeySettings> = {};
  if (!stored) return out;
  const view = effectiveKeySettings(undefined, stored);
  for (const key of WORKSPACE_KEY_SETTINGS) if (Object.hasOwn(stored, key)) Object.assign(out, { [key]: view[key] });
  return out;
}

function checkValue(key: string, value: unknown, problems: Problem[], level: 'organisation' | 'workspace'): boolean {
  const fail = (message: string) => (problems.push({ param: key, message }), false);
  switch (key) {
    case 'user_api_key_auto_create':
      return typeof value === 'boolean' || (level === 'organisation' && value === null) || fail('user_api_key_auto_create must be a boolean');
    case 'user_api_key_rotation_period':
      return value === null || isRotation(value) || fail('user_api_key_rotation_period must be "weekly", "monthly" or null');
    case 'user_api_key_ttl':
      if (level === 'organisation') return fail('user_api_key_ttl is a workspace setting: set it on /workspaces/{workspaceId}/settings/api-keys');
      return value === null || isTtl(value) || fail(`user_api_key_ttl must be an integer number of seconds, at least ${MIN_USER_KEY_TTL_SECONDS}, or null for no expiry`);
    default:
      return fail(`${key} is not an API-key setting`);
  }
}

/**
 * A PUT body. Organisation: a value sets it, null restores the default. Workspace: a value (null included) is the
 * override; `inherit` (a list of setting names) drops overrides so the organisation's value applies again.
 */
export function keySettingsChange(body: unknown, level: 'organisation' | 'workspace'): SettingsChange {
  const fields = objectBody(body);
  const problems: Problem[] = [];
  const change: SettingsChange = { set: {}, remove: [] };
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'inherit' && level === 'workspace') continue;
    if (!checkValue(key, value, problems, level)) continue;
    if (value === null && level === 'organisation') change.remove.push(key);
    else change.set[key] = value as Json;
  }
  if (level === 'workspace' && Object.hasOwn(fields, 'inherit')) {
    const inherit = fields.inherit;
    if (!Array.isArray(inherit) || inherit.some((k) => typeof k !== 'string' || !(WORKSPACE_KEY_SETTINGS as readonly string[]).includes(k)))
      problems.push({ param: 'inherit', message: `inherit must be a list of setting names (${WORKSPACE_KEY_SETTINGS.join(', ')})` });
    else
      for (const key of inherit as string[]) {
        if (Object.hasOwn(change.set, key)) problems.push({ param: 'inherit', message: `${key} is both set and inherited` });
        else change.remove.push(key);
      }
  }
  throwProblems(problems);
  return change;
}
