/**
 * Read-only analytics over the request log (issue #17): GET /analytics/summary, /analytics/graphs/:metric,
 * /analytics/groups/:groupBy and /logs/groups/:groupBy. What a caller sees is admin-settings' logScope (the common
 * filters and the security settings' visibility); docs/admin/analytics.md.
 */
import { AdminServices } from '@gateway/admin-kit';
import { definePlugin, Services } from '@gateway/sdk';
import { analyticsRoutes } from './routes.ts';

export { aggregate, countGroups, GROUP_COLUMNS, type GroupColumn, type Metric } from './aggregate.ts';
export { BUCKET_SIZES, bucketSize, MAX_BUCKETS } from './routes.ts';

export default definePlugin({
  setup(api) {
    const database = api.service(Services.database);
    const security = api.service(AdminServices.securitySettings);
    for (const route of analyticsRoutes({ database, security })) api.route(route);
  },
});
