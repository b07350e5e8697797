/**
 * Prompts (docs/admin/prompts.md): Mustache templates with versions and partials (the prompts, prompt_versions,
 * prompt_partials and prompt_partial_versions tables, the /prompts routes), their render, and their completions
 * through the gateway's own pipeline.
 */
import { AdminServices, type SecuritySettingsService } from '@gateway/admin-kit';
import { definePlugin, type GatewayCalls, Services } from '@gateway/sdk';
import { PromptAccessRules } from './access.ts';
import { promptStage } from './config-target.ts';
import { partialRoutes } from './routes/partials.ts';
import { promptRoutes, SCOPES } from './routes/prompts.ts';
import { runRoutes } from './routes/run.ts';
import { PromptStore } from './store.ts';
import { promptMigrations } from './tables.ts';

export { PromptStore, parseReference } from './store.ts';
export { promptMigrations, prompts, promptVersions, promptPartials, promptPartialVersions } from './tables.ts';
export { SCOPES } from './routes/prompts.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(promptMigrations);
    const store = new PromptStore({ database, state: api.state, logger: api.logger });
    await store.start();
    api.onClose(() => store.stop());
    // Looked up once every plugin is set up: the settings plugin may load after this one, or not at all.
    let security: SecuritySettingsService | undefined;
    let calls: GatewayCalls | undefined;
    api.onReady(() => {
      security = api.optional(AdminServices.securitySettings);
      calls = api.optional(Services.gatewayCalls);
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
    });
    const access = new PromptAccessRules(() => security);
    const routes = [...partialRoutes({ database, store, access }), ...promptRoutes({ database, store, access }), ...runRoutes({ store, access, calls: () => calls })];
    for (const route of routes) api.route(route);
    api.stage(promptStage(store));
  },
});
