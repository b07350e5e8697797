/**
 * Rate-limit policies (docs/admin/policies.md): the rate_limit_policies table and the /policies/rate-limits routes,
 * the `rate_limits` of API keys, virtual keys and integration workspaces (service `rateLimits` in admin-kit, used by
 * their routes), the active limits indexed in memory (reloaded in every process on change), and their enforcement on
 * every gateway call. POLICY_ENABLED=OFF switches routes, fields and enforcement off; RATE_LIMITS_FAIL_MODE (open |
 * closed, default open) says what a call gets while the counters (Redis) cannot be reached.
 */
import { failModeOf } from '@gateway/policy-kit';
import { AdminServices } from '@gateway/admin-kit';
import { definePlugin, Services } from '@gateway/sdk';
import { rateLimitRoutes, SCOPES } from './routes.ts';
import { rateLimitStages, rateLimitToolCallStage } from './stage.ts';
import { PolicyStore } from './store.ts';
import { createSubjectRateLimits } from './subjects.ts';
import { rateLimitMigrations } from './table.ts';

export { duration, rateLimitStages, rateLimitToolCallStage, toolCallFacts } from './stage.ts';
export { indexPolicies, PolicyStore, type RateLimitIndex } from './store.ts';
export { rateLimitMigrations, rateLimitPolicies, subjectRateLimits } from './table.ts';
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
    // The routes answer 403 feature_disabled by themselves; the `rate_limits` fields and the enforcement are simply
    // not there.
    if (api.optional(Services.settings)?.features.policy === false) return;
    api.provide(AdminServices.rateLimits, createSubjectRateLimits(database, store));
    const failMode = failModeOf(api.env.RATE_LIMITS_FAIL_MODE);
    const deps = { index: () => store.index, state: api.state, failMode, logger: api.logger };
    for (const stage of rateLimitStages(deps)) api.stage(stage);
    // `tool_calls` policies: the MCP and A2A proxies' calls, through the tool-call phase.
    api.stage(rateLimitToolCallStage(deps));
  },
});
