import { describe, expect, test } from 'bun:test';
import identity, { organisations } from '@gateway/admin-identity';
import { DIALECTS, testPluginApi, useTestDatabase } from '@gateway/db/testing';
import plugin from './index.ts';
import { apiKeys } from './tables.ts';
import type { ApiKeyVerifier } from './verifier.ts';

for (const dialect of DIALECTS) {
  describe(`identity and api-keys plugins [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('setup migrates, bootstraps from GATEWAY_ADMIN_API_KEY and provides the verifier', async () => {
      const { database } = await t.fresh();
      const env = { GATEWAY_ADMIN_API_KEY: 'plugin-admin-key', API_KEY_PREFIX: 'pk-' };
      const harness = testPluginApi({ services: { database }, env });
      await identity.setup(harness.api);
      await plugin.setup(harness.api);
      const verifier = harness.services.get('apiKeyVerifier') as ApiKeyVerifier;
      const caller = await verifier.verify('plugin-admin-key');
      expect(caller).toMatchObject({ scopes: ['*'], keyType: 'organisation-service', userId: null });
      expect(await verifier.verify('pk-wrong')).toBeUndefined();
      await harness.close();

      // A restart neither migrates nor bootstraps again.
      const again = testPluginApi({ services: { database }, env: { GATEWAY_ADMIN_API_KEY: 'another-key' } });
      await identity.setup(again.api);
      await plugin.setup(again.api);
      expect(await database.count(organisations)).toBe(1);
      expect(await database.count(apiKeys)).toBe(1);
      await again.close();
    });
  });
}
