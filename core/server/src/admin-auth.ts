/**
 * The authenticator of administration calls: API keys, and the sessions of users signed in with SSO (service
 * `sessionVerifier`, admin/sso; docs/admin/sso.md). A session comes as the `gw_session` cookie, read only when the call
 * sends no key header, so a key always wins. Sessions are never accepted on the data plane.
 */
import type { KeyVerifier } from '@gateway/sdk';

/** The cookie and the prefix of a session's secret (admin/sso makes them). */
export const SESSION_COOKIE = 'gw_session';
const SESSION_PREFIX = 'gws_';

/** The session secret of a Cookie header, if any. */
export function sessionSecret(cookie: string | null | undefined): string | undefined {
  if (!cookie?.includes(SESSION_COOKIE)) return undefined;
  for (const part of cookie.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/** `apiKeys` for API keys, `sessions` for session secrets (unknown to the API-key verifier without SSO). */
export function adminAuthenticator(apiKeys: KeyVerifier | undefined, sessions: KeyVerifier | undefined): KeyVerifier | undefined {
  if (!sessions) return apiKeys;
  const keys: KeyVerifier = apiKeys ?? { verify: async () => undefined };
  return {
    verify: (secret) => (secret.startsWith(SESSION_PREFIX) ? sessions.verify(secret) : keys.verify(secret)),
    peek: (secret) => (secret.startsWith(SESSION_PREFIX) ? undefined : keys.peek?.(secret)),
  };
}
