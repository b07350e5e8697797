/**
 * Saved configs (docs/admin/configs.md): the saved_configs and saved_config_versions tables, the /configs routes,
 * and the in-memory set behind service `savedConfigs` (`x-gateway-config: <id or slug>`). Model aliases
 * (docs/clients.md): the /model-aliases routes and service `modelRouting` (aliases, then the workspace's default
 * config, for calls that name only a model). Service
 * `GuardrailServices.references` tells the saved-guardrail plugin which configs use a guardrail.
 */
import { GuardrailServices, type SavedGuardrailStore } from '@gateway/admin-guardrails';
import { AdminServices, loadedDocumentFields, type DocumentFields, lazySecretBox, rebindSealed } from '@gateway/admin-kit';
import { definePlugin, RoutingServices, Services } from '@gateway/sdk';
import { aliasRoutes } from './alias-routes.ts';
import { AliasStore } from './alias-store.ts';
import { WorkspaceDefaultsStore } from './workspace-defaults.ts';
import { guardrailReferences } from './references.ts';
import { configRoutes, SCOPES } from './routes.ts';
import { ConfigStore } from './store.ts';
import { configMigrations, savedConfigs, savedConfigVersions } from './tables.ts';

export { ConfigStore, MISSING_GUARDRAIL_CHECK } from './store.ts';
export { configRoutes, SCOPES } from './routes.ts';
export { checkedConfig } from './validate.ts';
export { configMigrations, savedConfigs, savedConfigVersions } from './tables.ts';
export { modelAliases } from './alias-table.ts';
export { AliasStore } from './alias-store.ts';
export { aliasRoutes } from './alias-routes.ts';
export { WorkspaceDefaultsStore } from './workspace-defaults.ts';

const notReady = (): never => {
  throw new Error('configs: a route was called before the gateway was ready');
};

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(configMigrations);
    // Only a config with secrets needs the key (GATEWAY_ENCRYPTION_KEY, or the SQLite key file).
    const getBox = lazySecretBox(api.env);
    // Secrets sealed before they were bound to their rows are bound now (admin-kit sealed-rebind.ts).
    await rebindSealed(database, { table: savedConfigs, fields: ['secrets'] }, getBox, api.logger);
    await rebindSealed(database, { table: savedConfigVersions, fields: ['secrets'] }, getBox, api.logger);
    // Once ready: the saved-guardrail plugin may load after this one, or not at all.
    let guardrailStore: SavedGuardrailStore | undefined;
    const guardrails = () => guardrailStore;
    const store = new ConfigStore({ database, state: api.state, box: getBox, guardrails, logger: api.logger });
    await store.start();
    api.onClose(() => store.stop());
    api.provide(Services.savedConfigs, store.resolve);
    // Calls that name only a model: its workspace's aliases, else its default config.
    const aliases = new AliasStore({ database, state: api.state, logger: api.logger, defaultRoute: (workspaceId) => store.defaultRoute(workspaceId) });
    await aliases.start();
    api.onClose(() => aliases.stop());
    api.provide(RoutingServices.modelRouting, aliases);
    // A workspace's `defaults.metadata`, added by the server to its requests; reloaded when the identity plugin
    // (which this one requires, and which stores workspaces) says they changed.
    const workspaceDefaults = new WorkspaceDefaultsStore(database, api.state, api.logger);
    await workspaceDefaults.start();
    api.onClose(() => workspaceDefaults.stop());
    api.provide(RoutingServices.workspaceDefaults, workspaceDefaults);
    api.optional(AdminServices.events)?.on('workspace.defaults_changed', () => workspaceDefaults.changed());
    api.provide(GuardrailServices.references, guardrailReferences(database, guardrails));
    // Once every plugin declared its fields: which keys of a config are secrets, and which decide where they go.
    let fields: DocumentFields | undefined;
    api.onReady(() => {
      fields = loadedDocumentFields(api);
      guardrailStore = api.optional(GuardrailServices.store);
      // Keys may be given these scopes (the api-keys plugin's catalogue has them already; adding is idempotent).
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
    });
    for (const route of aliasRoutes({ database, aliases })) api.route(route);
    for (const route of configRoutes({ database, store, box: getBox, guardrails, validator: api.service(Services.configValidator), fields: () => fields ?? notReady() })) api.route(route);
  },
});
