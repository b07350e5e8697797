/**
 * Read-only analytics over the request log (issue #17): GET /analytics/summary, /analytics/graphs/:metric,
 * /analytics/groups/:groupBy and /logs/groups/:groupBy. What a caller sees is admin-settings' logScope (the common
 * filters and the security settings' visibility); docs/admin/analytics.md.
 */
import { AdminServices } from '@gateway/admin-kit';
import { requestLogMigrations } from '@gateway/plugin-request-log';
import { definePlugin, Services } from '@gateway/sdk';
import { analyticsMigrations } from './indexes.ts';
import { analyticsRoutes } from './routes.ts';

export { aggregate, countGroups, GROUP_COLUMNS, type GroupColumn, type Metric } from './aggregate.ts';
export { analyticsMigrations } from './indexes.ts';
export { BUCKET_SIZES, bucketSize, MAX_BUCKETS } from './routes.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    // The indexes go on the request log's table: its migrations first (recorded by id, so each applies once).
    await database.migrate([...requestLogMigrations, ...analyticsMigrations]);
    const security = api.service(AdminServices.securitySettings);
    for (const route of analyticsRoutes({ database, security })) api.route(route);
  },
});
