/**
 * Saved configs (docs/admin/configs.md): the saved_configs and saved_config_versions tables, the /configs routes,
 * and the in-memory set behind service `savedConfigs` (`x-gateway-config: <id or slug>`). Service
 * `guardrailReferences` tells the saved-guardrail plugin which configs use a guardrail.
 */
import { type SavedGuardrailStore, SERVICES as GUARDRAIL_SERVICES } from '@gateway/admin-guardrails';
import { lazySecretBox, lazyService, optionalService, rebindSealed } from '@gateway/admin-kit';
import { type Database, definePlugin } from '@gateway/sdk';
import { guardrailReferences } from './references.ts';
import { configRoutes, SCOPES } from './routes.ts';
import { ConfigStore } from './store.ts';
import { configMigrations, savedConfigs, savedConfigVersions } from './tables.ts';

export { ConfigStore, MISSING_GUARDRAIL_CHECK } from './store.ts';
export { configRoutes, SCOPES } from './routes.ts';
export { checkedConfig } from './validate.ts';
export { configMigrations, savedConfigs, savedConfigVersions } from './tables.ts';

/** Service names this plugin provides. */
export const SERVICES = { resolver: 'savedConfigs' } as const;

export default definePlugin({
  async setup(api) {
    const database = api.service<Database>('database');
    await database.migrate(configMigrations);
    // Only a config with secrets needs the key (GATEWAY_ENCRYPTION_KEY, or the SQLite key file).
    const getBox = lazySecretBox(api.env);
    // Secrets sealed before they were bound to their rows are bound now (admin-kit sealed-rebind.ts).
    await rebindSealed(database, { table: savedConfigs, fields: ['secrets'] }, getBox, api.logger);
    await rebindSealed(database, { table: savedConfigVersions, fields: ['secrets'] }, getBox, api.logger);
    // Looked up when needed: the saved-guardrail plugin may load after this one, or not at all.
    const guardrails = lazyService<SavedGuardrailStore>(api, GUARDRAIL_SERVICES.store);
    const store = new ConfigStore({ database, state: api.state, box: getBox, guardrails, logger: api.logger });
    await store.start();
    api.onClose(() => store.stop());
    api.provide(SERVICES.resolver, store.resolve);
    api.provide(GUARDRAIL_SERVICES.references, guardrailReferences(database, guardrails));
    // Keys may be given these scopes (the api-keys plugin's catalogue has them already; adding is idempotent).
    optionalService<{ add(scopes: readonly string[]): void }>(api, 'apiKeyScopes')?.add(SCOPES);
    for (const route of configRoutes({ database, store, box: getBox, guardrails })) api.route(route);
  },
});
