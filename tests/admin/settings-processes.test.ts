// Two gateways on one MariaDB and one Redis (two processes of a deployment): a security setting changed through
// one changes what the other answers at once, although the other had the organisation's settings cached (the
// change is announced on Redis). SQLite is left out: one SQLite file is not shared by several gateways.
import { describe, expect, test } from 'bun:test';
import { AdminServices } from '@gateway/admin-kit';
import type { Gateway } from '@gateway/server';
import { TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { useGatewayPair } from './settings-support.ts';

describe('settings across gateways sharing MariaDB and Redis', () => {
  const pair = useGatewayPair();

  const get = async (gateway: Gateway, path: string) => {
    const response = await gateway.handle(new Request(`http://gateway.test/v1${path}`, { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY } }));
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  test('a change through one gateway reaches the cache of the other within a second', async () => {
    const { a, b } = pair();
    const service = b.service(AdminServices.securitySettings);
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
