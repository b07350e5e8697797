/**
 * Single sign-on with OpenID Connect (docs/admin/sso.md): per organisation an OpenID provider reached through
 * discovery; the authorisation-code flow with PKCE, state and nonce (openid-client); the e-mail domain picks the
 * organisation. A signed-in user gets a session cookie that the administration API accepts as it accepts API keys
 * (service `sessionVerifier`), until it is older than `session_settings.max_session_ttl`, logged out or revoked.
 */
import { lazySecretBox } from '@gateway/admin-kit';
import { SettingsServices } from '@gateway/admin-settings';
import { definePlugin, Services } from '@gateway/sdk';
import { OidcClients } from './oidc.ts';
import { SSO_SCOPES, ssoRoutes } from './routes.ts';
import { SessionStore } from './sessions.ts';
import { readSsoSettings } from './settings.ts';
import { ssoMigrations } from './tables.ts';

export { SESSION_COOKIE, SESSION_PREFIX, sessionCookie, SessionStore } from './sessions.ts';
export { ssoMigrations, ssoProviders, ssoSessions } from './tables.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(ssoMigrations);
    const settings = readSsoSettings(api.env);
    api.optional(Services.apiKeyScopes)?.add([...SSO_SCOPES]);
    const sessionSettings = api.optional(SettingsServices.session);
    const sessions = new SessionStore(database, () => sessionSettings);
    api.provide(Services.sessionVerifier, sessions);
    const clients = new OidcClients(api.service(Services.hostGuard), settings.allowHttpIssuer);
    for (const route of ssoRoutes({ database, settings, sessions, clients, box: lazySecretBox(api.env) })) api.route(route);
  },
});
