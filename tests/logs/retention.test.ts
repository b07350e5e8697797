// Log retention (LOG_RETENTION_DAYS) on a SQLite file and on MariaDB, with two gateways sharing the database: rows
// older than N days (inserted directly, as a long-running deployment would have them) are deleted in batches of
// LOG_RETENTION_BATCH_SIZE by the one process holding the job's lease, while the other's round does nothing; rows
// within N days and the row of a real gateway call stay. A lease whose holder went away is taken over once it ran
// out. A malformed setting turns retention off (rows kept), never the request log.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, inArray, Services } from '@gateway/sdk';
import { LogRetention, RequestLogServices, requestLogJobs, requestLogs } from '@gateway/plugin-request-log';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { providerHeaders, startInProcessGateway } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const DAY_MS = 86_400_000;
const RETENTION = { LOG_RETENTION_DAYS: '30', LOG_RETENTION_BATCH_SIZE: '4', LOG_RETENTION_INTERVAL_MS: '3600000' };

for (const dialect of E2E_DIALECTS) {
  describe(`log retention [${dialect}]`, () => {
    let db: E2EDatabase;
    let one: Gateway;
    let two: Gateway;
    let mock: OpenAIMock;
    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      mock = await startOpenAIMock({ apiKey: null });
      one = await startInProcessGateway({ DATABASE_URL: db.url, ...RETENTION });
      two = await startInProcessGateway({ DATABASE_URL: db.url, ...RETENTION });
    });
    afterAll(async () => {
      await one?.close();
      await two?.close();
      await mock?.stop();
      await db?.drop();
    });

    /** Rows `age` days old, written as the request log writes them. */
    async function oldRows(tag: string, count: number, ageDays: number) {
      const database = one.service(Services.database);
      const createdAt = Date.now() - ageDays * DAY_MS;
      await database.insert(
        requestLogs,
        Array.from({ length: count }, (_, i) => ({
          trace_id: `${tag}-${i}`,
          endpoint: 'chat',
          method: 'POST',
          path: '/v1/chat/completions',
          status: 200,
          latency_ms: 5,
          created_at: createdAt + i,
        })),
      );
    }
    const countOf = (traces: string[]) => one.service(Services.database).count(requestLogs, (c) => inArray(c.trace_id, traces), { fresh: true });

    test('one process deletes the rows older than N days in batches; recent rows and real calls stay', async () => {
      const oldTraces = Array.from({ length: 10 }, (_, i) => `old-${i}`);
      const recentTraces = Array.from({ length: 3 }, (_, i) => `recent-${i}`);
      await oldRows('old', 10, 45);
      await oldRows('recent', 3, 29);
      const traceId = `retention-${crypto.randomUUID()}`;
      const res = await one.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: providerHeaders(mock.url, { 'x-gateway-trace-id': traceId }),
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'keep me' }] }),
        }),
      );
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await one.service(RequestLogServices.queue).flush();
      expect(await countOf(oldTraces)).toBe(10);

      const first = await one.service(RequestLogServices.retention).round();
      const second = await two.service(RequestLogServices.retention).round();
      // 10 rows in batches of 4: 4 + 4 + 2. The other process sees the lease held and deletes nothing.
      expect(first).toEqual({ claimed: true, deleted: 10, batches: 3 });
      expect(second).toEqual({ claimed: false, deleted: 0, batches: 0 });
      expect(await countOf(oldTraces)).toBe(0);
      expect(await countOf(recentTraces)).toBe(3);
      expect(await countOf([traceId])).toBe(1);

      // The holder renews its own lease; nothing is left to delete.
      expect(await one.service(RequestLogServices.retention).round()).toEqual({ claimed: true, deleted: 0, batches: 0 });
    });

    test('a lease whose holder stopped is taken over once it has run out', async () => {
      await oldRows('orphan', 2, 60);
      const database = two.service(Services.database);
      const [job] = await database.select(requestLogJobs, { where: (c) => eq(c.name, 'retention'), fresh: true });
      expect(job?.owner).toBe(one.service(RequestLogServices.retention).owner);
      const logger = { info() {}, warn() {}, error() {}, debug() {} } as unknown as ConstructorParameters<typeof LogRetention>[1];
      const now = Date.now();
      const early = new LogRetention(database, logger, { days: 30, now: () => now });
      expect((await early.round()).claimed).toBe(false);
      const late = new LogRetention(database, logger, { days: 30, now: () => job!.lease_until + 1 });
      expect(await late.round()).toEqual({ claimed: true, deleted: 2, batches: 1 });
      // Now the first process is the one refused.
      expect((await one.service(RequestLogServices.retention).round()).claimed).toBe(false);
    });

    test('a malformed LOG_RETENTION_DAYS or batch size turns retention off, not the request log', async () => {
      for (const env of [{ LOG_RETENTION_DAYS: 'thirty' }, { LOG_RETENTION_DAYS: '-1' }, { LOG_RETENTION_DAYS: '30', LOG_RETENTION_BATCH_SIZE: '100000' }]) {
        const gw = await startInProcessGateway({ DATABASE_URL: db.url, ...env });
        try {
          expect(() => gw.service(RequestLogServices.retention)).toThrow();
          expect(gw.service(RequestLogServices.queue)).toBeDefined();
        } finally {
          await gw.close();
        }
      }
    });
  });
}
