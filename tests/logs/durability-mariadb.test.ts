// The request log loses nothing while MariaDB is down (issue #26): the real server (a separate process) on a private
// `mariadbd` (its own data directory and port; never the shared server on 3306), killed with SIGKILL mid-load and
// started again. Rows the writer cannot insert go to the journal (/metrics counts them, /health says degraded);
// once the server is back they are replayed and every request has exactly one row in request_logs.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createConnection } from 'mysql2/promise';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { MARIADB_MISSING, type MariaDbServer, startMariaDb } from '../helpers/mariadb-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { droppedOf, health, load, logMetrics, until } from './durability-helpers.ts';

const T = 180_000;

describe.skipIf(MARIADB_MISSING !== undefined)(
  `request log durability on MariaDB: server killed and restarted mid-load${MARIADB_MISSING ? ` (skipped: ${MARIADB_MISSING})` : ''}`,
  () => {
    let server: MariaDbServer;
    let mock: OpenAIMock;
    let gw: GatewayProcess | undefined;
    beforeAll(async () => {
      server = await startMariaDb({ serverId: 1 });
      await server.start();
      await server.query('CREATE DATABASE gw');
      mock = await startOpenAIMock({ apiKey: null });
    }, T);
    afterAll(async () => {
      await gw?.stop();
      await mock?.stop();
      await server?.destroy();
    });

    async function counts(prefix: string): Promise<{ rows: number; unique: number }> {
      const conn = await createConnection({ uri: server.url('gw') });
      try {
        const [rows] = await conn.query('SELECT COUNT(*) AS `rows`, COUNT(DISTINCT trace_id) AS `unique` FROM request_logs WHERE trace_id LIKE ?', [`${prefix}-%`]);
        const row = (rows as { rows: number | string; unique: number | string }[])[0]!;
        return { rows: Number(row.rows), unique: Number(row.unique) };
      } finally {
        await conn.end();
      }
    }

    test(
      'every request accounted for after the database comes back, none twice, none dropped',
      async () => {
        gw = await startGatewayProcess({ DATABASE_URL: server.url('gw') });
        const g = gw;
        expect((await load(g, mock.url, 'up', 100)).every((s) => s === 200)).toBe(true);
        await until('rows before the crash', async () => (await counts('up')).rows === 100, 30_000);

        // Killed while traffic flows.
        const traffic = load(g, mock.url, 'down', 300, 4);
        await Bun.sleep(100);
        await server.kill('SIGKILL');
        const statuses = await traffic;
        // Gateway calls go on without the database (the admin key needs none).
        expect(statuses.filter((s) => s === 200).length).toBe(300);
        const metrics = await until('entries journaled', async () => {
          const m = await logMetrics(g);
          return (m.gateway_request_log_rows_journaled_total ?? 0) > 0 && m;
        }, 60_000);
        expect(metrics.gateway_request_log_journal_bytes).toBeGreaterThan(0);
        expect((await health(g)).status).toBe('degraded');

        await server.start();
        expect((await load(g, mock.url, 'back', 100)).every((s) => s === 200)).toBe(true);
        for (const [prefix, n] of [['up', 100], ['down', 300], ['back', 100]] as const) {
          await until(`${prefix}: ${n} rows`, async () => (await counts(prefix)).rows === n, 60_000);
          expect(await counts(prefix)).toEqual({ rows: n, unique: n });
        }
        const after = await until('journal replayed', async () => {
          const m = await logMetrics(g);
          return m.gateway_request_log_journal_pending_bytes === 0 && m;
        }, 30_000);
        expect(droppedOf(after)).toBe(0);
        expect(after.gateway_request_log_rows_replayed_total).toBe(after.gateway_request_log_rows_journaled_total);
      },
      T,
    );
  },
);
