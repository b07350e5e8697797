import { describe, expect, test } from 'bun:test';
import { asc, eq, type Database } from '@gateway/sdk';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testLogger } from '@gateway/sdk/testing';
import { LogQueue } from './queue.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testEntry, usageFrom } from './test-request.ts';

const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

for (const dialect of DIALECTS) {
  describe(`LogQueue [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function fresh(): Promise<Database> {
      const { database } = await t.fresh();
      await database.migrate(requestLogMigrations);
      return database;
    }

    test('enqueue is synchronous: nothing is written until the batch goes out', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger(), intervalMs: 60_000 });
      for (let i = 0; i < 400; i++) expect(queue.enqueue(testEntry(i, { responseBody: '{"usage":{"prompt_tokens":1}}' }))).toBeUndefined(); // no promise
      expect(queue.size).toBe(400);
      expect(await database.count(requestLogs)).toBe(0);
      await queue.flush();
      expect(queue.size).toBe(0);
      expect(await database.count(requestLogs)).toBe(400);
    });

    test('batches: one multi-row INSERT per batchSize entries', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger(), batchSize: 500, intervalMs: 60_000 });
      for (let i = 0; i < 1200; i++) queue.enqueue(testEntry(i));
      await queue.flush();
      expect(queue.stats).toMatchObject({ enqueued: 1200, written: 1200, inserts: 3, droppedFailed: 0, droppedOverflow: 0 });
      expect(await database.count(requestLogs)).toBe(1200);
    });

    test('a full batch goes out without waiting for the interval; a partial one after it', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger(), batchSize: 10, intervalMs: 1000 });
      const waitForCount = async (n: number) => {
        const until = Date.now() + 5000;
        while ((await database.count(requestLogs)) < n && Date.now() < until) await Bun.sleep(10);
      };
      let started = Date.now();
      for (let i = 0; i < 10; i++) queue.enqueue(testEntry(i));
      await waitForCount(10);
      expect(Date.now() - started).toBeLessThan(900);
      started = Date.now();
      queue.enqueue(testEntry(10));
      await Bun.sleep(100);
      expect(await database.count(requestLogs)).toBe(10);
      await waitForCount(11);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(await database.count(requestLogs)).toBe(11);
      // The rows are visible a moment before the insert's own acknowledgement updates the stats.
      await queue.flush();
      expect(queue.stats.inserts).toBe(2);
    });

    test('flush covers entries enqueued while a batch is being written', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger(), batchSize: 5, intervalMs: 60_000 });
      for (let i = 0; i < 5; i++) queue.enqueue(testEntry(i));
      const first = queue.flush();
      for (let i = 5; i < 8; i++) queue.enqueue(testEntry(i));
      await first;
      await queue.flush();
      expect(await database.count(requestLogs)).toBe(8);
      await queue.flush(); // nothing pending: resolves at once
    });

    test('token counts come from the outcome (read once by the core), not from the body', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger() });
      queue.enqueue(testEntry(1, { responseBody: JSON.stringify({ model: 'm-json', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }), usageFrom: usageFrom(10, 20, 30) }));
      queue.enqueue(testEntry(2, { responseBody: sse({ model: 'm-sse', choices: [] }, '[DONE]'), usageFrom: usageFrom(4, 5, 9) }));
      // A body with usage but an outcome without: nothing is parsed here.
      queue.enqueue(testEntry(3, { responseBody: JSON.stringify({ usage: { prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 } }) }));
      await queue.flush();
      const rows = await database.select(requestLogs, { orderBy: (c) => asc(c.trace_id) });
      expect(rows.map((r) => [r.trace_id, r.prompt_tokens, r.completion_tokens, r.total_tokens, r.model])).toEqual([
        ['trace-1', 10, 20, 30, 'm-json'],
        ['trace-2', 4, 5, 9, 'm-sse'],
        ['trace-3', null, null, null, null],
      ]);
    });

    test('bodies are capped with a marker; JSON bodies, metadata and attempts round-trip', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger(), maxBodyBytes: 1024 });
      const big = 'é'.repeat(5000);
      queue.enqueue(
        testEntry(1, {
          requestBody: { model: 'm', messages: [{ role: 'user', content: big }] },
          responseBody: JSON.stringify({ text: big, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
          usageFrom: usageFrom(1, 1, 2),
          metadata: { env: 'test' },
          attempts: [{ index: 'config.targets[0]', providerId: 'openai', retry: 1, status: 500, latencyMs: 3, error: 'boom' }],
          errorCode: 'upstream_error',
          errorMessage: 'x'.repeat(10_000),
        }),
      );
      queue.enqueue(testEntry(2, { requestBody: new Uint8Array(5000), requestContentType: 'application/octet-stream' }));
      await queue.flush();
      const one = (await database.findOne(requestLogs, 'trace_id', 'trace-1'))!;
      expect(Buffer.byteLength(one.request_body!.split('\n…')[0]!)).toBeLessThanOrEqual(1024);
      expect(one.request_body).toMatch(/…\[truncated: \d+ bytes in all\]$/);
      expect(one.response_body).toMatch(/…\[truncated: \d+ bytes in all\]$/);
      expect(one.total_tokens).toBe(2);
      expect(one.metadata).toEqual({ env: 'test' });
      expect(one.attempts).toEqual([{ index: 'config.targets[0]', providerId: 'openai', retry: 1, status: 500, latencyMs: 3, error: 'boom' }]);
      expect(one.error_message!.length).toBeLessThan(4200);
      const two = (await database.findOne(requestLogs, 'trace_id', 'trace-2'))!;
      expect(two.request_body).toBe('[application/octet-stream body: 5000 bytes]');
    });

    test('over-long client values are fitted to their columns instead of failing the batch', async () => {
      const database = await fresh();
      const queue = new LogQueue(database, { logger: testLogger() });
      queue.enqueue(testEntry(1, { spanId: 's'.repeat(500), spanName: 'n'.repeat(500), path: '/p'.repeat(2000) }));
      queue.enqueue(testEntry(2));
      await queue.flush();
      expect(queue.stats.written).toBe(2);
      const row = (await database.findOne(requestLogs, 'trace_id', 'trace-1'))!;
      expect(row.span_id!.length).toBe(128);
      expect(row.path.length).toBe(1024);
    });

    test('a database error never throws: the batch is retried once, then dropped and counted', async () => {
      const { database } = await t.fresh(); // no migration: the table is missing
      const logger = testLogger();
      const queue = new LogQueue(database, { logger, retryDelayMs: 10, intervalMs: 60_000 });
      expect(() => queue.enqueue(testEntry(1))).not.toThrow();
      queue.enqueue(testEntry(2));
      await queue.flush();
      expect(queue.stats).toMatchObject({ written: 0, droppedFailed: 2, inserts: 0 });
      expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
      const warning = logger.records.find((r) => r.level === 'warn');
      expect(warning?.obj).toMatchObject({ dropped: 2, droppedTotal: 2 });
      // The log line names the cause but never repeats the statement's parameters (the bodies).
      expect(JSON.stringify(logger.records)).not.toContain('trace-1');

      await database.migrate(requestLogMigrations);
      queue.enqueue(testEntry(3));
      await queue.flush();
      expect(await database.count(requestLogs, (c) => eq(c.trace_id, 'trace-3'))).toBe(1);
    });

    test('memory is bounded by bytes: with no journal, beyond maxBytes the oldest are dropped and counted', async () => {
      const database = await fresh();
      const logger = testLogger();
      // An entry without bodies is estimated at 1 KiB (queued.ts): ten fit.
      const queue = new LogQueue(database, { logger, maxBytes: 10 * 1024, intervalMs: 60_000, batchSize: 100 });
      for (let i = 0; i < 25; i++) queue.enqueue(testEntry(i));
      expect(queue.size).toBe(10);
      expect(queue.bytes).toBe(10 * 1024);
      expect(queue.stats.droppedOverflow).toBe(15);
      expect(logger.records.filter((r) => r.level === 'warn')).toHaveLength(1);
      await queue.flush();
      const rows = await database.select(requestLogs, { orderBy: (c) => asc(c.latency_ms) });
      expect(rows.map((r) => r.latency_ms)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    });
  });
}
