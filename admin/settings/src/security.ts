/**
 * SPEC.md's security settings: their defaults, which of them a workspace may override, and how the effective values
 * of a workspace come about (defaults, then the organisation's values, then the workspace's overrides).
 */
import type { SecuritySettings } from '@gateway/admin-kit';
import type { Json } from '@gateway/sdk';
import { objectBody, type Problem, throwProblems } from './body.ts';

export type SecurityKey = keyof SecuritySettings;

export const SECURITY_DEFAULTS: Readonly<SecuritySettings> = Object.freeze({
  organisationAdminsViewLogs: true,
  organisationAdminsViewLogMetadata: true,
  membersViewAllData: true,
  managersViewAllData: true,
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
  membersViewAnalytics: true,
  managersViewAnalytics: true,
  managersWriteWsIntegrations: true,
  managersWriteWsMcpIntegrations: true,
  managersWriteMcpServers: true,
});

export const SECURITY_KEYS = Object.keys(SECURITY_DEFAULTS) as SecurityKey[];

/** SPEC.md's override category `data_visibility`: who sees every log and analytics of a workspace. */
export const DATA_VISIBILITY_KEYS: readonly SecurityKey[] = ['membersViewAllData', 'managersViewAllData'];

/** The settings a workspace may override (SPEC.md marks them "overridable", plus the data_visibility category). */
export const OVERRIDABLE_SECURITY_KEYS: readonly SecurityKey[] = [
  'organisationAdminsViewLogs',
  'organisationAdminsViewLogMetadata',
  ...DATA_VISIBILITY_KEYS,
  'managersWriteWsIntegrations',
  'managersWriteWsMcpIntegrations',
  'managersWriteMcpServers',
];

const isSecurityKey = (key: string): key is SecurityKey => Object.hasOwn(SECURITY_DEFAULTS, key);

/** Stored values of one level, as they are merged: only known keys with boolean values count. */
function apply(target: SecuritySettings, stored: Readonly<Record<string, Json>> | undefined, allowed: readonly SecurityKey[]): void {
  if (!stored) return;
  for (const key of allowed) {
    const value = stored[key];
    if (typeof value === 'boolean') target[key] = value;
  }
}

/** Defaults, the organisation's values, then (for a workspace) its overrides of the overridable keys. */
export function effectiveSecurity(
  organisation: Readonly<Record<string, Json>> | undefined,
  workspace: Readonly<Record<string, Json>> | undefined,
): SecuritySettings {
  const settings: SecuritySettings = { ...SECURITY_DEFAULTS };
  apply(settings, organisation, SECURITY_KEYS);
  apply(settings, workspace, OVERRIDABLE_SECURITY_KEYS);
  return settings;
}

/** A change to stored values: keys to set, keys to drop (back to the default, or to the organisation's value). */
export interface SettingsChange {
  set: Record<string, Json>;
  remove: string[];
}

/**
 * A PUT body of security settings: a boolean sets a key, null drops it (the organisation back to the default, a
 * workspace back to the organisation's value). Every problem is reported in one 400, the first one as `param`.
 */
export function securityChange(body: unknown, level: 'organisation' | 'workspace'): SettingsChange {
  const fields = objectBody(body);
  const allowed = level === 'workspace' ? OVERRIDABLE_SECURITY_KEYS : SECURITY_KEYS;
  const problems: Problem[] = [];
  const change: SettingsChange = { set: {}, remove: [] };
  for (const [key, value] of Object.entries(fields)) {
    if (!isSecurityKey(key)) problems.push({ param: key, message: `${key} is not a security setting` });
    else if (!allowed.includes(key))
      problems.push({ param: key, message: `${key} cannot be overridden per workspace (overridable: ${OVERRIDABLE_SECURITY_KEYS.join(', ')})` });
    else if (value === null) change.remove.push(key);
    else if (typeof value === 'boolean') change.set[key] = value;
    else problems.push({ param: key, message: `${key} must be a boolean, or null to ${level === 'workspace' ? 'remove the override' : 'restore the default'}` });
  }
  throwProblems(problems);
  return change;
}

/** The stored values of a level restricted to what counts there (a workspace row only holds overridable keys). */
export function securityOverrides(stored: Readonly<Record<string, Json>> | undefined): Partial<SecuritySettings> {
  const out: Partial<SecuritySettings> = {};
  for (const key of OVERRIDABLE_SECURITY_KEYS) {
    const value = stored?.[key];
    if (typeof value === 'boolean') out[key] = value;
  }
  return out;
}
