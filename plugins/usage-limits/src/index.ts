/**
 * Usage limits (docs/admin/policies.md): the usage_limits table, the /policies/usage-limits routes, the usage_limits
 * of API keys, virtual keys and integration workspaces (service `usageLimits` in admin-kit, used by their routes),
 * the active limits indexed in memory (reloaded in every process on change), their enforcement on every gateway
 * call, the consumption added at completion, periodic resets and alert e-mails. USAGE_LIMITS_ENABLED=OFF switches
 * routes, fields and enforcement off; USAGE_LIMITS_FAIL_MODE (open | closed, default open) says what a call gets
 * while the counters (Redis) cannot be reached.
 */
import { ApiKeyServices } from '@gateway/admin-api-keys';
import { AdminServices } from '@gateway/admin-kit';
import { failModeOf } from '@gateway/policy-kit';
import { definePlugin, defineService, Services } from '@gateway/sdk';
import { Alerts } from './alerts.ts';
import { Groups } from './groups.ts';
import { Resets } from './resets.ts';
import { SCOPES, usageLimitRoutes } from './routes.ts';
import { usageLimitStages } from './stage.ts';
import { LimitStore } from './store.ts';
import { createSubjectLimits } from './subjects.ts';
import { usageLimitMigrations } from './table.ts';

export { periodAt, advance, firstReset, midnightOf } from './period.ts';
export { usageLimitMigrations, usageLimits, usageLimitGroups } from './table.ts';
export { LimitStore } from './store.ts';

/** What tests and operators may reach: the resets (to run one now) and the alerts (to wait for their e-mails). */
export const UsageLimitServices = {
  resets: defineService<Resets>('usageLimitResets'),
  alerts: defineService<Alerts>('usageLimitAlerts'),
  /** Calls whose cost was unknown (a model without a price): nothing was added to the cost limits they met. */
  unpriced: defineService<{ readonly count: number }>('usageLimitUnpriced'),
} as const;

function envNumber(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n >= 0 ? n : fallback;
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(usageLimitMigrations);
    const store = new LimitStore(database, api.state, api.logger);
    await store.start();
    const groups = new Groups(database, api.logger);
    const resets = new Resets(database, store, api.logger);
    const alerts = new Alerts({ database, state: api.state, mailer: api.service(ApiKeyServices.mailer), logger: api.logger });
    const unpriced = { count: 0 };
    api.provide(UsageLimitServices.resets, resets);
    api.provide(UsageLimitServices.alerts, alerts);
    api.provide(UsageLimitServices.unpriced, unpriced);
    api.onClose(async () => {
      await resets.stop();
      await alerts.flush();
      store.stop();
    });
    for (const route of usageLimitRoutes({ database, store, state: api.state, groups })) api.route(route);
    api.onReady(() => api.optional(Services.apiKeyScopes)?.add(SCOPES));
    // The routes answer 403 feature_disabled by themselves; the fields and the enforcement are simply not there.
    if (api.optional(Services.settings)?.features.usageLimits === false) return;
    api.provide(AdminServices.usageLimits, createSubjectLimits({ database, store, state: api.state, groups }));
    resets.start(envNumber(api.env.USAGE_LIMITS_RESET_INTERVAL_MS, 60_000));
    const failMode = failModeOf(api.env.USAGE_LIMITS_FAIL_MODE);
    for (const stage of usageLimitStages({ index: () => store.index, state: api.state, failMode, logger: api.logger, resets, alerts, groups, unpriced }))
      api.stage(stage);
  },
});
