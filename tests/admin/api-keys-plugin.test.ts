// The api-keys plugin in a gateway, on SQLite and MariaDB: migration and bootstrap once, the services it offers,
// the scheduler's own timer, and its settings refused when malformed.
import { describe, expect, test } from 'bun:test';
import { apiKeys } from '@gateway/admin-api-keys';
import { organisations } from '@gateway/admin-identity';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { Services } from '@gateway/sdk';
import { createGateway } from '@gateway/server';
import { testLogger } from '@gateway/sdk/testing';
import { ROOT } from '../helpers/gateway-process.ts';
import { TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type Json, startKeysGateway } from './api-keys-support.ts';

for (const dialect of DIALECTS) {
  describe(`api-keys plugin [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('bootstraps from GATEWAY_ADMIN_API_KEY once; provides the verifier, the scope catalogue and the scheduler', async () => {
      const { url, database } = await t.fresh();
      const first = await startKeysGateway(url, { GATEWAY_ADMIN_API_KEY: 'plugin-admin-key-0123456789abcdef' });
      try {
        const verifier = first.gateway.service(Services.apiKeyVerifier);
        expect(await verifier.verify('plugin-admin-key-0123456789abcdef')).toMatchObject({ scopes: ['*'], keyType: 'organisation-service', userId: null });
        expect(await verifier.verify('pk-wrong')).toBeUndefined();
        const scopes = first.gateway.service(Services.apiKeyScopes);
        expect(scopes.has('agents.invoke')).toBe(true);
        expect(scopes.has('organisation_service_api_keys.rotate')).toBe(true);
        expect(scopes.has('made_up.scope')).toBe(false);
        scopes.add(['made_up.scope']);
        expect(scopes.has('made_up.scope')).toBe(true);
        expect(() => scopes.add(['Not A Scope'])).toThrow();
        expect(typeof first.rotation.tick).toBe('function');
      } finally {
        await first.close();
      }
      // A restart does not bootstrap again; another GATEWAY_ADMIN_API_KEY is added as one more admin key (issue #25:
      // the variable applies on an existing database, or says why not), and the first one keeps working.
      const again = await startKeysGateway(url, { GATEWAY_ADMIN_API_KEY: 'another-admin-key-0123456789abcdef' });
      try {
        expect(await database.count(organisations, undefined, { fresh: true })).toBe(1);
        expect(await database.count(apiKeys, undefined, { fresh: true })).toBe(2);
        expect((await again.call('GET', '/api-keys', undefined, 'plugin-admin-key-0123456789abcdef')).status).toBe(200);
        expect((await again.call('GET', '/api-keys', undefined, 'another-admin-key-0123456789abcdef')).status).toBe(200);
        expect((await again.call('GET', '/api-keys', undefined, 'another-key')).status).toBe(401);
      } finally {
        await again.close();
      }
    });

    test('the scheduler runs by itself every API_KEY_SCHEDULER_INTERVAL_MS', async () => {
      const { url } = await t.fresh();
      const k = await startKeysGateway(url, { API_KEY_SCHEDULER_INTERVAL_MS: '50' });
      try {
        const soon = new Date(k.clock.now() + 300).toISOString();
        const made = await k.call<{ id: string }>('POST', '/api-keys', {
          name: 'soon',
          type: 'organisation-service',
          scopes: ['api_keys.read'],
          rotation_policy: { rotation_period: 'weekly', next_rotation_at: soon },
        });
        expect(made.status).toBe(201);
        let shown: Json = {};
        const deadline = Date.now() + 5_000;
        while (!shown.last_rotated_at && Date.now() < deadline) {
          await Bun.sleep(50);
          shown = (await k.call('GET', `/api-keys/${made.body.id}`)).body;
        }
        expect(shown).toMatchObject({ pending_secret: true, next_rotation_at: new Date(Date.parse(soon) + 7 * 86_400_000).toISOString() });
      } finally {
        await k.close();
      }
    });

    test('malformed settings are logged with the variable named and the defaults used: keys still authenticate', async () => {
      const { url } = await t.fresh();
      for (const [name, value] of [
        ['API_KEY_SCHEDULER_INTERVAL_MS', 'often'],
        ['API_KEY_ROTATION_NOTICE_DAYS', '0'],
        ['API_KEY_EXPIRY_NOTICE_DAYS', '-1'],
        ['SMTP_PORT', 'twenty-five'],
      ]) {
        const logger = testLogger();
        const gateway = await createGateway({
          env: { DATABASE_URL: url, GATEWAY_ADMIN_API_KEY: TEST_ADMIN_KEY, GATEWAY_ENCRYPTION_KEY: 'gateway-test-encryption-key', SMTP_HOST: '127.0.0.1', [name]: value },
          roots: [ROOT],
          logger,
        });
        try {
          expect(gateway.plugins.refused.map((r) => r.name)).not.toContain('@gateway/admin-api-keys');
          expect(logger.records.some((r) => r.level === 'error' && JSON.stringify(r).includes(name))).toBe(true);
          const r = await gateway.handle(new Request('http://gateway.test/v1/api-keys', { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY } }));
          expect(r.status).toBe(200);
        } finally {
          await gateway.close();
        }
      }
    });
  });
}
