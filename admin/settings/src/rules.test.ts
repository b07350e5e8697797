// The settings bodies and how effective values come about: defaults, organisation values, workspace overrides.
import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { effectiveKeySettings, keyOverrides, keySettingsChange } from './key-settings.ts';
import { effectiveSecurity, OVERRIDABLE_SECURITY_KEYS, SECURITY_DEFAULTS, securityChange } from './security.ts';
import { effectiveSession, sessionChange, sessionExpired } from './session.ts';

function badRequest(fn: () => unknown): { message: string; param: string | null } {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError && error.status === 400) return { message: error.message, param: error.param ?? null };
    throw error;
  }
  throw new Error('expected a 400');
}

describe('security settings', () => {
  test("SPEC.md's defaults", () => {
    expect(effectiveSecurity(undefined, undefined)).toEqual({
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
    expect([...OVERRIDABLE_SECURITY_KEYS].sort() as string[]).toEqual(
      ['organisationAdminsViewLogs', 'organisationAdminsViewLogMetadata', 'membersViewAllData', 'managersViewAllData', 'managersWriteWsIntegrations', 'managersWriteWsMcpIntegrations', 'managersWriteMcpServers'].sort(),
    );
  });

  test('organisation values over defaults, workspace overrides over both, only for overridable keys', () => {
    const organisation = { membersViewAllData: false, membersWritePrompts: true, organisationAdminsViewLogs: false };
    const workspace = { organisationAdminsViewLogs: true, membersWritePrompts: false, membersViewAllData: true };
    expect(effectiveSecurity(organisation, undefined)).toMatchObject({ membersViewAllData: false, membersWritePrompts: true, organisationAdminsViewLogs: false });
    // membersWritePrompts is not overridable: a stray stored value is ignored.
    expect(effectiveSecurity(organisation, workspace)).toMatchObject({ membersViewAllData: true, membersWritePrompts: true, organisationAdminsViewLogs: true });
    expect(effectiveSecurity({ membersViewAllData: 'no' }, undefined).membersViewAllData).toBe(SECURITY_DEFAULTS.membersViewAllData);
  });

  test('bodies: booleans set, null drops, the rest is a 400 naming the field', () => {
    expect(securityChange({ membersViewAllData: false, managersViewAllData: null }, 'organisation')).toEqual({ set: { membersViewAllData: false }, remove: ['managersViewAllData'] });
    expect(badRequest(() => securityChange({ membersViewPrompts: false }, 'workspace'))).toEqual({
      message: expect.stringContaining('membersViewPrompts cannot be overridden per workspace'),
      param: 'membersViewPrompts',
    });
    expect(badRequest(() => securityChange({ membersViewAllData: 'yes' }, 'organisation')).param).toBe('membersViewAllData');
    expect(badRequest(() => securityChange({ nope: true }, 'organisation'))).toEqual({ message: 'nope is not a security setting', param: 'nope' });
    expect(badRequest(() => securityChange([], 'organisation')).param).toBe('body');
    expect(badRequest(() => securityChange(undefined, 'organisation')).param).toBe('body');
  });
});

describe('API-key settings', () => {
  test('defaults; organisation values; workspace overrides including an explicit null', () => {
    expect(effectiveKeySettings(undefined, undefined)).toEqual({ user_api_key_auto_create: false, user_api_key_rotation_period: null, user_api_key_ttl: null });
    const organisation = { user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly', user_api_key_ttl: 999 };
    // A ttl at the organisation level does not count: it is a workspace setting.
    expect(effectiveKeySettings(organisation, undefined)).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly', user_api_key_ttl: null });
    const workspace = { user_api_key_rotation_period: null, user_api_key_ttl: 3600 };
    expect(effectiveKeySettings(organisation, workspace)).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: null, user_api_key_ttl: 3600 });
    expect(keyOverrides(workspace)).toEqual({ user_api_key_rotation_period: null, user_api_key_ttl: 3600 });
  });

  test('bodies', () => {
    expect(keySettingsChange({ user_api_key_auto_create: true, user_api_key_rotation_period: null }, 'organisation')).toEqual({
      set: { user_api_key_auto_create: true },
      remove: ['user_api_key_rotation_period'],
    });
    expect(keySettingsChange({ user_api_key_rotation_period: null, user_api_key_ttl: 60, inherit: ['user_api_key_auto_create'] }, 'workspace')).toEqual({
      set: { user_api_key_rotation_period: null, user_api_key_ttl: 60 },
      remove: ['user_api_key_auto_create'],
    });
    expect(badRequest(() => keySettingsChange({ user_api_key_ttl: 3600 }, 'organisation')).param).toBe('user_api_key_ttl');
    expect(badRequest(() => keySettingsChange({ user_api_key_ttl: 59 }, 'workspace')).param).toBe('user_api_key_ttl');
    expect(badRequest(() => keySettingsChange({ user_api_key_ttl: 60.5 }, 'workspace')).param).toBe('user_api_key_ttl');
    expect(badRequest(() => keySettingsChange({ user_api_key_rotation_period: 'daily' }, 'organisation')).param).toBe('user_api_key_rotation_period');
    expect(badRequest(() => keySettingsChange({ user_api_key_auto_create: null }, 'workspace')).param).toBe('user_api_key_auto_create');
    expect(badRequest(() => keySettingsChange({ inherit: ['nope'] }, 'workspace')).param).toBe('inherit');
    expect(badRequest(() => keySettingsChange({ inherit: [] }, 'organisation')).param).toBe('inherit');
    expect(badRequest(() => keySettingsChange({ user_api_key_ttl: 60, inherit: ['user_api_key_ttl'] }, 'workspace')).param).toBe('inherit');
  });
});

describe('session settings', () => {
  test('max_session_ttl: at least 900 seconds, flat or nested under session_settings; null removes the limit', () => {
    expect(sessionChange({ max_session_ttl: 900 })).toEqual({ set: { max_session_ttl: 900 }, remove: [] });
    expect(sessionChange({ session_settings: { max_session_ttl: 3600 } })).toEqual({ set: { max_session_ttl: 3600 }, remove: [] });
    expect(sessionChange({ max_session_ttl: null })).toEqual({ set: {}, remove: ['max_session_ttl'] });
    expect(badRequest(() => sessionChange({ max_session_ttl: 899 }))).toEqual({ message: expect.stringContaining('at least 900'), param: 'max_session_ttl' });
    expect(badRequest(() => sessionChange({ session_settings: { max_session_ttl: 10 } })).param).toBe('session_settings.max_session_ttl');
    expect(badRequest(() => sessionChange({ max_session_ttl: '3600' })).param).toBe('max_session_ttl');
    expect(badRequest(() => sessionChange({ idle: 5 })).param).toBe('idle');
    expect(badRequest(() => sessionChange({ session_settings: 5 })).param).toBe('session_settings');
    expect(effectiveSession(undefined)).toEqual({ max_session_ttl: null });
  });

  test('sessionExpired: older than max_session_ttl is expired; no limit never expires', () => {
    const issued = 1_700_000_000_000;
    expect(sessionExpired(issued, { max_session_ttl: 900 }, issued + 899_999)).toBe(false);
    expect(sessionExpired(issued, { max_session_ttl: 900 }, issued + 900_000)).toBe(true);
    expect(sessionExpired(issued, { max_session_ttl: null }, issued + 10 * 365 * 86_400_000)).toBe(false);
  });
});
