import { describe, expect, test } from 'bun:test';
import { DIALECTS, testPluginApi, useTestDatabase } from '@gateway/db/testing';
import plugin from './index.ts';
import { apiKeys, organisations } from './tables.ts';
import type { ApiKeyVerifier } from './verifier.ts';

for (const dialect of DIALECTS) {
  describe(`identity plugin [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('setup migrates, bootstraps from GATEWAY_ADMIN_API_KEY and provides the verifier', async () => {
      const { database } = await t.fresh();
      const harness = testPluginApi({ services: { database }, env: { GATEWAY_ADMIN_API_KEY: 'plugin-admin-key', API_KEY_PREFIX: 'pk-' } });
      await plugin.setup(harness.api);
      const verifier = harness.services.get('apiKeyVerifier') as ApiKeyVerifier;
      const caller = await verifier.verify('plugin-admin-key');
      expect(caller?.scopes).toEqual(['*']);
      expect(await verifier.verify('pk-wrong')).toBeUndefined();
      await harness.close();

      // A restart neither migrates nor bootstraps again.
      const again = testPluginApi({ services: { database }, env: { GATEWAY_ADMIN_API_KEY: 'another-key' } });
      await plugin.setup(again.api);
      expect(await database.count(organisations)).toBe(1);
      expect(await database.count(apiKeys)).toBe(1);
      await again.close();
    });
  });
}
