/**
 * Integrations, workspace providers and virtual keys: the tables, the administration routes, GET /models, and
 * service `storedAccess` through which the server resolves `@slug` providers and virtual keys from memory.
 */
import { AdminServices, declaredFields, type LimitServices, rebindSealed, secretBoxFromEnv, type SecuritySettingsService, StoredSnapshot } from '@gateway/admin-kit';
import { definePlugin, type ModelRouting, RoutingServices, Services } from '@gateway/sdk';
import { type Ctx, notReady } from './context.ts';
import { type IntegrationFields, integrationFields } from './credentials.ts';
import { integrationModelRoutes } from './routes/integration-models.ts';
import { integrationWorkspaceRoutes } from './routes/integration-workspaces.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { modelRoutes } from './routes/models.ts';
import { providerRoutes } from './routes/providers.ts';
import { virtualKeyRoutes } from './routes/virtual-keys.ts';
import { createIntegrationPrices } from './prices.ts';
import { createStoredAccess } from './stored-access.ts';
import { loadStoredSet, type StoredSet } from './stored-set.ts';
import { integrationMigrations, integrations, virtualKeys } from './tables.ts';

export { SCOPES, MODELS_SCOPES } from './scopes.ts';
export { integrationMigrations, integrations, integrationModels, integrationWorkspaces, virtualKeys, workspaceProviders } from './tables.ts';
export { createStoredAccess, type IntegrationStoredAccess, type StoredAccessDeps } from './stored-access.ts';
export { loadStoredSet, type StoredSet } from './stored-set.ts';
export { maskValue, maskCredentials, type Credentials } from './credentials.ts';
export { virtualKeySlugs } from './virtual-key-slugs.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(integrationMigrations);
    const box = secretBoxFromEnv(api.env);
    // Credentials sealed before they were bound to their rows are bound now (admin-kit sealed-rebind.ts).
    await rebindSealed(database, { table: integrations, fields: ['credentials'] }, () => box, api.logger);
    await rebindSealed(database, { table: virtualKeys, fields: ['credentials'] }, () => box, api.logger);
    const snapshot = new StoredSnapshot<StoredSet>({
      name: 'integrations',
      state: api.state,
      load: () => loadStoredSet(database, box, api.logger),
      logger: api.logger,
    });
    await snapshot.start();
    api.onClose(() => snapshot.stop());

    // The loaded providers (complete once every plugin is set up), and secrets from the secret-reference plugin,
    // which this one requires.
    const adapters = api.service(Services.providerAdapters);
    const secrets = api.optional(AdminServices.secretReferences);
    // Once ready: the settings plugin may load after this one, or not at all; every provider has declared its
    // target fields, so what an integration may hold is known and its bodies are compiled, once.
    let security: SecuritySettingsService | undefined;
    let limits: LimitServices = {};
    let routing: ModelRouting | undefined;
    let fields: IntegrationFields | undefined;
    const whenReady: ((fields: IntegrationFields) => void)[] = [];
    api.onReady(() => {
      security = api.optional(AdminServices.securitySettings);
      routing = api.optional(RoutingServices.modelRouting);
      limits = { usage_limits: api.optional(AdminServices.usageLimits), rate_limits: api.optional(AdminServices.rateLimits) };
      const ready = integrationFields(declaredFields(adapters.values()));
      for (const fn of whenReady) fn(ready);
      fields = ready;
    });
    const ctx: Ctx = {
      database,
      box,
      snapshot,
      logger: api.logger,
      secrets: () => secrets,
      security: () => security,
      limits: () => limits,
      providerIds: () => adapters,
      fields: () => fields ?? notReady(),
      whenReady: (fn) => void whenReady.push(fn),
    };
    api.provide(Services.storedAccess, createStoredAccess({ current: () => snapshot.current, secrets: ctx.secrets }));
    api.provide(Services.integrationPrices, createIntegrationPrices(() => snapshot.current));
    for (const route of [
      ...integrationRoutes(ctx),
      ...integrationWorkspaceRoutes(ctx),
      ...integrationModelRoutes(ctx),
      ...providerRoutes(ctx),
      ...virtualKeyRoutes(ctx),
      ...modelRoutes(ctx, () => routing),
    ])
      api.route(route);
  },
});
