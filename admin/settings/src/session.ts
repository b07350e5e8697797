/**
 * Session settings (SPEC.md): `max_session_ttl`, in seconds, at least 900; a session older than it is rejected and
 * its user must sign in again. There are no sessions yet (they come with SSO): `sessionExpired` is what that login
 * code will call with a session's issue time and the organisation's settings.
 */
import type { Json } from '@gateway/sdk';
import { objectBody, type Problem, throwProblems } from './body.ts';
import type { SettingsChange } from './security.ts';

export const MIN_SESSION_TTL_SECONDS = 900;

export interface SessionSettings {
  /** Seconds a session may live; null: no limit set by the organisation. */
  max_session_ttl: number | null;
}

export const SESSION_DEFAULTS: Readonly<SessionSettings> = Object.freeze({ max_session_ttl: null });

export function effectiveSession(stored: Readonly<Record<string, Json>> | undefined): SessionSettings {
  const ttl = stored?.max_session_ttl;
  return { max_session_ttl: typeof ttl === 'number' ? ttl : SESSION_DEFAULTS.max_session_ttl };
}

/** True when a session issued at `issuedAtMs` is older than the organisation allows (never without a limit). */
export function sessionExpired(issuedAtMs: number, settings: SessionSettings, now: number = Date.now()): boolean {
  if (settings.max_session_ttl === null) return false;
  return now - issuedAtMs >= settings.max_session_ttl * 1000;
}

/**
 * A PUT body: `{"max_session_ttl": 3600}` or SPEC.md's nesting `{"session_settings": {"max_session_ttl": 3600}}`;
 * null removes the limit.
 */
export function sessionChange(body: unknown): SettingsChange {
  let fields = objectBody(body);
  let prefix = '';
  if (Object.hasOwn(fields, 'session_settings')) {
    const others = Object.keys(fields).filter((k) => k !== 'session_settings');
    if (others.length) throwProblems([{ param: others[0]!, message: `${others[0]} cannot be combined with session_settings` }]);
    const nested = fields.session_settings;
    if (nested === null || typeof nested !== 'object' || Array.isArray(nested))
      throwProblems([{ param: 'session_settings', message: 'session_settings must be an object' }]);
    fields = nested as Record<string, unknown>;
    prefix = 'session_settings.';
  }
  const problems: Problem[] = [];
  const change: SettingsChange = { set: {}, remove: [] };
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'max_session_ttl') problems.push({ param: prefix + key, message: `${prefix}${key} is not a session setting` });
    else if (value === null) change.remove.push(key);
    else if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < MIN_SESSION_TTL_SECONDS)
      problems.push({ param: prefix + key, message: `${prefix}max_session_ttl must be an integer number of seconds, at least ${MIN_SESSION_TTL_SECONDS} (or null for no limit)` });
    else change.set[key] = value;
  }
  throwProblems(problems);
  return change;
}
