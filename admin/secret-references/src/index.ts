/**
 * Secret references: external secret managers (AWS Secrets Manager `aws_sm`, Azure Key Vault `azure_kv`, HashiCorp
 * Vault KV v2 `hashicorp_vault`) that integrations, virtual keys and MCP integrations read credentials from at
 * request time through `secret_mappings`. Provides the service `AdminServices.secretReferences` (a SecretResolver)
 * and the /secret-references routes.
 *
 * Environment: SECRET_REFERENCES_CACHE_TTL_MS (how long a fetched secret is kept in the process, default 30000),
 * SECRET_REFERENCES_TIMEOUT_MS (deadline of one manager call, default 10000).
 */
import { AdminServices, rebindSealed, secretBoxFromEnv } from '@gateway/admin-kit';
import { definePlugin, Services } from '@gateway/sdk';
import { secretReferenceRoutes } from './routes.ts';
import { DEFAULT_CACHE_TTL_MS, DEFAULT_TIMEOUT_MS, SecretReferenceService } from './service.ts';
import { secretReferenceMigrations, secretReferences } from './tables.ts';

export { MANAGER_TYPES, type ManagerType } from './kinds.ts';
export { SCOPES, secretReferenceRoutes } from './routes.ts';
export { SecretReferenceService, type SecretReferenceServiceOptions } from './service.ts';
export { secretReferenceMigrations, secretReferences } from './tables.ts';

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isInteger(n) && n >= 0 ? n : fallback;
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(secretReferenceMigrations);
    const box = secretBoxFromEnv(api.env);
    // Logins sealed before they were bound to their rows are bound now (admin-kit sealed-rebind.ts).
    await rebindSealed(database, { table: secretReferences, fields: ['auth_config'] }, () => box, api.logger);
    const hostGuard = api.optional(Services.hostGuard);
    const service = new SecretReferenceService({
      database,
      box,
      state: api.state,
      hostGuard,
      logger: api.logger,
      cacheTtlMs: positiveInt(api.env.SECRET_REFERENCES_CACHE_TTL_MS, DEFAULT_CACHE_TTL_MS),
      timeoutMs: positiveInt(api.env.SECRET_REFERENCES_TIMEOUT_MS, DEFAULT_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS,
    });
    await service.start();
    api.onClose(() => service.stop());
    api.provide(AdminServices.secretReferences, service);
    for (const route of secretReferenceRoutes({ database, box, hostGuard, service })) api.route(route);
  },
});
