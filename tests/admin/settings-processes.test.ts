// Two gateways on one MariaDB and one Redis (two processes of a deployment): a security setting changed through
// one changes what the other answers at once, although the other had the organisation's settings cached (the
// change is announced on Redis). SQLite is left out: one SQLite file is not shared by several gateways.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { SecuritySettingsService } from '@gateway/admin-kit';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('settings across gateways sharing MariaDB and Redis', () => {
  let db: E2EDatabase;
  let a: Gateway;
  let b: Gateway;
  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    // Other suites on the same Redis may hear the announcement: it names this run's (random) organisation only.
    const env = { DATABASE_URL: db.url, REDIS_URL };
    a = await startInProcessGateway(env);
    b = await startInProcessGateway(env);
  }, 30_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  }, 30_000);

  const get = async (gateway: Gateway, path: string) => {
    const response = await gateway.handle(new Request(`http://gateway.test/v1${path}`, { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY } }));
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  test('a change through one gateway reaches the cache of the other within a second', async () => {
    const service = b.plugins.registry.services.get('securitySettings') as SecuritySettingsService;
    const settings = await get(b, '/settings/security'); // cached in b from here on
    const organisationId = String(settings.organisation_id);
    expect(settings.membersViewAllData).toBe(true);
    expect((await service.get(organisationId, null)).membersViewAllData).toBe(true);

    const put = await a.handle(
      new Request('http://gateway.test/v1/settings/security', {
        method: 'PUT',
        headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ membersViewAllData: false }),
      }),
    );
    expect(put.status).toBe(200);
    const deadline = Date.now() + 1000;
    while ((await service.get(organisationId, null)).membersViewAllData && Date.now() < deadline) await Bun.sleep(10);
    expect((await service.get(organisationId, null)).membersViewAllData).toBe(false);
    expect((await get(b, '/settings/security')).membersViewAllData).toBe(false);
  });
});
