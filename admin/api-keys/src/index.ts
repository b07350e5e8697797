/**
 * API keys: the table, the first key of a new organisation, and `apiKeyVerifier` (an ApiKeyVerifier) for the
 * server's authentication step.
 */
import type { BootstrapResult } from '@gateway/admin-identity';
import { definePlugin, type Database } from '@gateway/sdk';
import { bootstrapKey } from './bootstrap.ts';
import { apiKeyMigrations } from './tables.ts';
import { ApiKeyVerifier } from './verifier.ts';

export { bootstrapKey, type BootstrapKeyOptions } from './bootstrap.ts';
export { generateSecret, hashSecret, prefixHint } from './secrets.ts';
export { apiKeyMigrations, apiKeys } from './tables.ts';
export { ApiKeyVerifier, type ApiKeyVerifierOptions } from './verifier.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service<Database>('database');
    await database.migrate(apiKeyMigrations);
    const identity = api.service<BootstrapResult>('identityBootstrap');
    if (identity.created)
      await bootstrapKey(database, identity.organisationId, {
        adminApiKey: api.env.GATEWAY_ADMIN_API_KEY || undefined,
        keyPrefix: api.env.API_KEY_PREFIX || undefined,
      });
    const verifier = new ApiKeyVerifier(database, { logger: api.logger });
    api.provide('apiKeyVerifier', verifier);
    api.onClose(() => verifier.flush());
  },
});
