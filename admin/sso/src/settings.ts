/** SSO's settings from the environment (docs/admin/sso.md). */
import { GatewayError } from '@gateway/sdk';

export interface SsoSettings {
  /** The callback URL registered with every organisation's provider: `<public gateway URL>/v1/sso/callback`. */
  readonly callbackUrl: string | undefined;
  /** Where the browser goes after signing in; unset: a JSON answer. */
  readonly afterLoginUrl: string | undefined;
  /** First sign-in of an unknown user: created as an organisation member (ON) or refused (OFF). */
  readonly createUsers: boolean;
  /** Extra scopes beside `openid email profile` (OIDC_CUSTOM_SCOPES). */
  readonly scopes: string;
  /** Lets an issuer be http:// (a provider on loopback in tests); never in production. */
  readonly allowHttpIssuer: boolean;
  /** The cookie's Secure flag: on unless SSO_COOKIE_SECURE=OFF (plain-http development). */
  readonly secureCookie: boolean;
}

const on = (v: string | undefined, fallback: boolean) => (v === undefined || v.trim() === '' ? fallback : v.trim().toUpperCase() === 'ON');

export function readSsoSettings(env: Readonly<Record<string, string | undefined>>): SsoSettings {
  const callbackUrl = env.SSO_CALLBACK_URL?.trim() || undefined;
  if (callbackUrl) {
    let url: URL;
    try {
      url = new URL(callbackUrl);
    } catch {
      throw new GatewayError({ code: 'invalid_setting', status: 500, message: 'SSO_CALLBACK_URL is not a URL' });
    }
    if (!url.pathname.endsWith('/v1/sso/callback'))
      throw new GatewayError({ code: 'invalid_setting', status: 500, message: 'SSO_CALLBACK_URL must end with /v1/sso/callback' });
  }
  const extra = (env.OIDC_CUSTOM_SCOPES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    callbackUrl,
    afterLoginUrl: env.SSO_AFTER_LOGIN_URL?.trim() || undefined,
    createUsers: on(env.SSO_CREATE_USERS, true),
    scopes: [...new Set(['openid', 'email', 'profile', ...extra])].join(' '),
    allowHttpIssuer: on(env.SSO_ALLOW_HTTP_ISSUER, false),
    secureCookie: on(env.SSO_COOKIE_SECURE, true),
  };
}
