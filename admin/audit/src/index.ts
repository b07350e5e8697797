/**
 * The audit log: the `auditLog` service (AuditSink) that the administration dispatcher writes every successful
 * change to, the `audit_logs` table, and the read routes. AUDIT_LOGS_ENABLED=OFF: nothing is recorded and the
 * routes answer 403 feature_disabled.
 */
import { definePlugin, type PluginApi, Services } from '@gateway/sdk';
import { auditRoutes } from './routes.ts';
import { AuditLogStore } from './sink.ts';
import { auditMigrations } from './table.ts';

export { isSecretName, redact, REDACTED } from './redact.ts';
export { auditRoutes, present, SCOPES } from './routes.ts';
export { AuditLogStore } from './sink.ts';
export { auditLogs, auditMigrations, type AuditLogRow } from './table.ts';

/** The `settings` service's `features.auditLogs` (AUDIT_LOGS_ENABLED), else the environment; on unless `OFF`. */
export function auditLogsEnabled(api: PluginApi): boolean {
  // No settings service (a test harness): the environment says.
  const settings = api.optional(Services.settings);
  if (settings) return settings.features.auditLogs;
  return (api.env.AUDIT_LOGS_ENABLED ?? 'ON').trim().toUpperCase() !== 'OFF';
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    // Migrated even while OFF: turning the feature on later needs no other step.
    await database.migrate(auditMigrations);
    const enabled = auditLogsEnabled(api);
    api.provide(Services.auditLog, new AuditLogStore(database, () => enabled));
    for (const route of auditRoutes(database)) api.route(route);
  },
});
