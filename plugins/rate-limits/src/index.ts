/**
 * Rate-limit policies (docs/admin/policies.md): the rate_limit_policies table and the /policies/rate-limits routes,
 * the active policies indexed in memory (reloaded in every process on change), and their enforcement on every
 * gateway call. POLICY_ENABLED=OFF switches routes and enforcement off; RATE_LIMITS_FAIL_MODE (open | closed,
 * default open) says what a call gets while the counters (Redis) cannot be reached.
 */
import { failModeOf } from '@gateway/policy-kit';
import { definePlugin, Services } from '@gateway/sdk';
import { rateLimitRoutes, SCOPES } from './routes.ts';
import { rateLimitStages } from './stage.ts';
import { PolicyStore } from './store.ts';
import { rateLimitMigrations } from './table.ts';

export { duration, rateLimitStages } from './stage.ts';
export { indexPolicies, PolicyStore } from './store.ts';
export { rateLimitMigrations, rateLimitPolicies } from './table.ts';
export { present, rateLimitRoutes, SCOPES } from './routes.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(rateLimitMigrations);
    const store = new PolicyStore(database, api.state, api.logger);
    await store.start();
    api.onClose(() => store.stop());
    for (const route of rateLimitRoutes(database, store)) api.route(route);
    api.onReady(() => api.optional(Services.apiKeyScopes)?.add(SCOPES));
    // The routes answer 403 feature_disabled by themselves; the enforcement is simply not there.
    if (api.optional(Services.settings)?.features.policy === false) return;
    const failMode = failModeOf(api.env.RATE_LIMITS_FAIL_MODE);
    for (const stage of rateLimitStages({ index: () => store.index, state: api.state, failMode, logger: api.logger })) api.stage(stage);
  },
});
