/**
 * Organisation and workspace settings: security settings (with workspace overrides), session settings, API-key
 * settings, email domains, and the /logs routes whose visibility the security settings govern.
 *
 * Services: `AdminServices.securitySettings` and `AdminServices.organisationSettings` (admin-kit),
 * `SettingsServices.session`, all read through one per-organisation cache (store.ts), and
 * `Services.workspaceCacheSettings` (a workspace's embeddings target for the semantic cache, held in memory,
 * cache-settings.ts).
 */
import { AdminServices } from '@gateway/admin-kit';
import { requestLogMigrations } from '@gateway/plugin-request-log';
import { defineService, definePlugin, type SavedConfigResolver, Services } from '@gateway/sdk';
import { CacheSettingsStore } from './cache-settings.ts';
import { cacheSettingsRoutes } from './routes/cache-settings.ts';
import { emailDomainRoutes } from './routes/email-domains.ts';
import { keySettingsRoutes } from './routes/api-keys.ts';
import { logRoutes } from './routes/logs.ts';
import { exportRoutes } from './routes/exports.ts';
import { savedFilterRoutes } from './routes/saved-filters.ts';
import { exportOptionsFromEnv, LogExportRunner } from './logs/exports.ts';
import { securityRoutes } from './routes/security.ts';
import { sessionRoutes } from './routes/session.ts';
import { SCOPES } from './scopes.ts';
import type { SessionSettings } from './session.ts';
import { SettingsStore } from './store.ts';
import { settingsMigrations } from './tables.ts';

export { CacheSettingsStore, type CacheSettingsStoreOptions, type WorkspaceCacheSettings } from './cache-settings.ts';
export { domainFor, emailDomain, isSubdomainOf, normaliseDomain, subdomainConflict, type DomainEntry } from './domains.ts';
export { effectiveKeySettings, KEY_SETTING_DEFAULTS, MIN_USER_KEY_TTL_SECONDS, ROTATION_PERIODS } from './key-settings.ts';
export { filterCondition, LOG_FILTER_PARAMS, type LogFilters, type LogScope, logScope, parseLogFilters, parseTime } from './logs/filters.ts';
export { LOG_FORMAT, presentLog, type LogRow } from './logs/present.ts';
export { visibleLogFilter, type LogColumns, type LogVisibility, type LogVisibilityDeps } from './logs/visibility.ts';
export { SCOPES, type SettingsScope } from './scopes.ts';
export { DATA_VISIBILITY_KEYS, effectiveSecurity, OVERRIDABLE_SECURITY_KEYS, SECURITY_DEFAULTS, SECURITY_KEYS } from './security.ts';
export { effectiveSession, MIN_SESSION_TTL_SECONDS, SESSION_DEFAULTS, sessionExpired, type SessionSettings } from './session.ts';
export { SETTINGS_CHANNEL, SettingsStore, type SettingsStoreOptions } from './store.ts';
export { emailDomains, logExports, logSavedFilters, organisationSettings, settingsMigrations, workspaceCacheSettings } from './tables.ts';
export { withSavedFilter } from './logs/saved-filters.ts';
export { DEFAULT_EXPORTS_DIR, exportOptionsFromEnv, INTERRUPTED as EXPORT_INTERRUPTED, LogExportRunner, STALE_MS as EXPORT_STALE_MS } from './logs/exports.ts';

/** Service `SettingsServices.session`: what the SSO login (to come) checks a session against. */
export interface SessionSettingsService {
  get(organisationId: string): Promise<SessionSettings>;
}

/** The services of this plugin that only plugins requiring it use. */
export const SettingsServices = {
  session: defineService<SessionSettingsService>('sessionSettings'),
  /** The log exports' runner (tests wait for it with `idle()`). */
  logExports: defineService<LogExportRunner>('logExports'),
} as const;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(settingsMigrations);
    // /logs reads the request log's table. plugins/request-log makes it; migrating it here too (the same
    // migrations, recorded by id, so each applies once) keeps /logs answering when that plugin is disabled.
    await database.migrate(requestLogMigrations);

    const store = new SettingsStore(database, api.state, { logger: api.logger });
    store.start();
    api.onClose(() => store.stop());
    api.provide(AdminServices.securitySettings, store);
    api.provide(AdminServices.organisationSettings, store);
    api.provide(SettingsServices.session, { get: (organisationId) => store.session(organisationId) });

    // The semantic cache asks for a workspace's embeddings target on every lookup: answered from memory.
    const cacheSettings = new CacheSettingsStore({ database, state: api.state, logger: api.logger });
    await cacheSettings.start();
    api.onClose(() => cacheSettings.stop());
    api.provide(Services.workspaceCacheSettings, { embeddingsConfig: cacheSettings.embeddingsConfig });

    // Once ready: the saved-config plugin may load after this one, or not at all.
    let savedConfigs: SavedConfigResolver | undefined;
    api.onReady(() => {
      savedConfigs = api.optional(Services.savedConfigs);
      // Keys may be given these scopes once the catalogue knows them (the api-keys plugin's, when it is loaded).
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
    });

    // Exports are written under GATEWAY_EXPORTS_DIR (default ./data/exports), off the request path; the sweep marks
    // interrupted ones and deletes those past LOG_EXPORTS_RETENTION_HOURS (logs/exports.ts).
    const { sweepIntervalMs, ...exportOptions } = exportOptionsFromEnv(api.env);
    const exports = new LogExportRunner(database, api.logger, exportOptions);
    exports.startSweeping(sweepIntervalMs);
    api.onClose(() => exports.close());
    api.provide(SettingsServices.logExports, exports);

    const deps = { database, store };
    for (const route of [
      ...securityRoutes(deps),
      ...sessionRoutes(deps),
      ...keySettingsRoutes(deps),
      ...emailDomainRoutes(deps),
      ...cacheSettingsRoutes({ database, cacheSettings, savedConfigs: () => savedConfigs }),
      // The saved filters' and exports' static paths before /logs/:logId.
      ...savedFilterRoutes({ database }),
      ...exportRoutes({ database, security: store, runner: exports }),
      ...logRoutes({ database, security: store }),
    ])
      api.route(route);
  },
});
