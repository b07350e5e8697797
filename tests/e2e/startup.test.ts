// End to end: how the real process starts, on SQLite and on MariaDB. `PORT=0` asks for any free port, as
// tests/helpers/gateway-process.ts relies on (it passes PORT=0 and reads the port back from the log line), so that
// several gateways can run side by side.

import { describe, expect, test } from 'bun:test';
import { createE2EDatabase, E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';

describe.each(E2E_DIALECTS)('startup (%s)', (dialect) => {
  test('PORT=0 listens on a free ephemeral port, not on the default 8787', async () => {
    const db = await createE2EDatabase(dialect);
    const gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: '0' }).catch(async (e: unknown) => {
      await db.drop();
      throw e;
    });
    try {
      expect(gw.port).toBeGreaterThan(0);
      expect(gw.port).not.toBe(8787);
      const health = await fetch(`${gw.url}/health`);
      expect(await health.json()).toEqual({ status: 'ok' });
    } finally {
      expect(await gw.stop()).toBe(0);
      await db.drop();
    }
  }, 30_000);
});
