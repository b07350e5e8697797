/**
 * Identity: organisations, workspaces and API keys. At start it migrates its tables, bootstraps an empty database,
 * and provides `apiKeyVerifier` (an ApiKeyVerifier) for the server's authentication step.
 */
import { definePlugin, type Database } from '@gateway/sdk';
import { bootstrap } from './bootstrap.ts';
import { identityMigrations } from './tables.ts';
import { ApiKeyVerifier } from './verifier.ts';

export { bootstrap, BOOTSTRAP_SLUG, type BootstrapOptions, type BootstrapResult } from './bootstrap.ts';
export { generateSecret, hashSecret, prefixHint } from './secrets.ts';
export { ALL_SCOPES, API_KEY_TYPES, apiKeys, identityMigrations, organisations, workspaces, type ApiKeyType } from './tables.ts';
export { ApiKeyVerifier, type ApiKeyVerifierOptions } from './verifier.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service<Database>('database');
    await database.migrate(identityMigrations);
    await bootstrap(database, {
      adminApiKey: api.env.GATEWAY_ADMIN_API_KEY || undefined,
      keyPrefix: api.env.API_KEY_PREFIX || undefined,
    });
    const verifier = new ApiKeyVerifier(database, { logger: api.logger });
    api.provide('apiKeyVerifier', verifier);
    api.onClose(() => verifier.flush());
  },
});
