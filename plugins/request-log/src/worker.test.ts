/**
 * The writer thread: against a temporary SQLite file and a fresh MariaDB database per run (dropped after), as the
 * gateway runs it (`worker` set), plus the fallbacks (in-memory database, thread that cannot open the database,
 * thread that dies). The main thread's responsiveness while a big batch is written: scripts/bench/request-log.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { asc, eq, type Database } from '@gateway/sdk';
import { createDatabase, databaseThreads } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testLogger } from '@gateway/sdk/testing';
import { LogQueue, type LogQueueOptions } from './queue.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testEntry, usageFrom } from './test-request.ts';
import type { LogEntry } from './entry.ts';

/** Writer threads started during a test (the `worker` process event hands each one over). */
const started: Worker[] = [];
/** Set by a test: terminate the next thread as soon as it is announced (before it can store anything). */
let killNext = false;
const onWorker = (w: Worker) => {
  started.push(w);
  if (killNext) {
    killNext = false;
    w.terminate();
  }
};
beforeAll(() => void process.on('worker', onWorker));
afterAll(() => void process.off('worker', onWorker));

const queues: LogQueue[] = [];
afterEach(async () => {
  // Never leave a thread behind, whatever a test did.
  await Promise.all(queues.splice(0).map((q) => q.close()));
});

function newQueue(database: Database, url: string, options: Partial<LogQueueOptions> = {}) {
  const logger = testLogger();
  const queue = new LogQueue(database, { logger, intervalMs: 60_000, retryDelayMs: 10, worker: { url, module: databaseThreads.module }, ...options });
  queues.push(queue);
  return { queue, logger };
}

/** The `n`-th thread started (the process event comes a little after the constructor). */
async function startedWorker(n: number): Promise<Worker> {
  for (let waited = 0; started.length <= n && waited < 5_000; waited += 5) await Bun.sleep(5);
  return started[n]!;
}

const exited = (w: Worker) => new Promise<void>((resolve) => w.addEventListener('close', () => resolve()));

const body = (i: number) => ({ model: 'gpt-test', messages: [{ role: 'user', content: `question ${i} `.repeat(40) }] });
const answer = (i: number) =>
  JSON.stringify({ id: `c${i}`, model: 'gpt-test', choices: [{ message: { content: 'answer '.repeat(100) } }], usage: { prompt_tokens: i, completion_tokens: 2, total_tokens: i + 2 } });

/** A realistic entry: the request body as the bytes received (the common case), a JSON answer with usage. */
function bigEntry(i: number): LogEntry {
  return testEntry(i, {
    requestBody: new TextEncoder().encode(JSON.stringify(body(i))),
    responseBody: answer(i),
    usageFrom: usageFrom(i, 2, i + 2),
    metadata: { team: 'a' },
    attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: 30 }],
  });
}

for (const dialect of DIALECTS) {
  describe(`LogQueue writer thread [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function fresh(migrated = true) {
      const db = await t.fresh();
      if (migrated) await db.database.migrate(requestLogMigrations);
      return db;
    }

    test('batches are written by the thread, through its own connection; rows as on the main thread', async () => {
      const { database, url } = await fresh();
      const { queue } = newQueue(database, url, { maxBodyBytes: 1024 });
      expect(queue.writerInfo).toMatchObject({ mode: 'worker', workerRunning: true, restarts: 0 });
      const big = 'é'.repeat(5000);
      queue.enqueue(testEntry(1, { requestBody: new TextEncoder().encode('{"raw":true}'), responseBody: answer(7), usageFrom: usageFrom(7, 2, 9), metadata: { env: 'test' } }));
      queue.enqueue(
        testEntry(2, {
          requestBody: { model: 'm', messages: [{ role: 'user', content: big }] },
          responseBody: JSON.stringify({ text: big, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
          usageFrom: usageFrom(1, 1, 2),
          attempts: [{ index: 'config.targets[0]', providerId: 'openai', retry: 1, status: 500, latencyMs: 3, error: 'boom' }],
          errorMessage: 'x'.repeat(10_000),
        }),
      );
      // A 1 MB upload: only its first maxBodyBytes bytes cross to the thread; the note keeps the whole size.
      queue.enqueue(testEntry(3, { requestBody: new TextEncoder().encode('a'.repeat(1_000_000)) }));
      queue.enqueue(testEntry(4, { requestBody: new Uint8Array(5000), requestContentType: 'application/octet-stream' }));
      queue.enqueue(testEntry(5, { spanId: 's'.repeat(500), path: '/p'.repeat(2000), responseBody: 'data: {"usage":{"prompt_tokens":4,"completion_tokens":5}}\n\n', usageFrom: usageFrom(4, 5, 9) }));
      await queue.flush();
      expect(queue.stats).toMatchObject({ enqueued: 5, written: 5, inserts: 1, droppedFailed: 0 });

      const rows = await database.select(requestLogs, { orderBy: (c) => asc(c.trace_id), fresh: true });
      expect(rows.map((r) => r.trace_id)).toEqual(['trace-1', 'trace-2', 'trace-3', 'trace-4', 'trace-5']);
      const [one, two, three, four, five] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
      expect(one).toMatchObject({ request_body: '{"raw":true}', prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, model: 'gpt-test', metadata: { env: 'test' } });
      expect(two.request_body).toMatch(/…\[truncated: \d+ bytes in all\]$/);
      expect(Buffer.byteLength(two.request_body!.split('\n…')[0]!)).toBeLessThanOrEqual(1024);
      expect(two.total_tokens).toBe(2);
      expect(two.attempts).toEqual([{ index: 'config.targets[0]', providerId: 'openai', retry: 1, status: 500, latencyMs: 3, error: 'boom' }]);
      expect(two.error_message!.length).toBeLessThan(4200);
      expect(three.request_body).toBe(`${'a'.repeat(1024)}\n…[truncated: 1000000 bytes in all]`);
      expect(four.request_body).toBe('[application/octet-stream body: 5000 bytes]');
      expect(five).toMatchObject({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
      expect(five.span_id!.length).toBe(128);
      expect(five.path.length).toBe(1024);
    });

    test('flush resolves once the thread has acknowledged everything enqueued before it, across batches', async () => {
      const { database, url } = await fresh();
      const { queue } = newQueue(database, url, { batchSize: 100 });
      for (let i = 0; i < 250; i++) queue.enqueue(bigEntry(i));
      const first = queue.flush();
      for (let i = 250; i < 320; i++) queue.enqueue(bigEntry(i)); // while the first batches are in flight
      await first;
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBeGreaterThanOrEqual(250);
      await queue.flush();
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(320);
      expect(queue.stats).toMatchObject({ enqueued: 320, written: 320, inserts: 4, droppedFailed: 0 });
      expect(queue.size).toBe(0);
      await queue.flush(); // nothing pending: resolves at once
      const row = (await database.findOne(requestLogs, 'trace_id', 'trace-300', { fresh: true }))!;
      expect(row).toMatchObject({ prompt_tokens: 300, total_tokens: 302, metadata: { team: 'a' } });
      expect(JSON.parse(row.request_body!)).toEqual(body(300));
    });

    test('a database error in the thread never throws: retried once, dropped, counted and logged here', async () => {
      const { database, url } = await fresh(false); // no migration: the table is missing
      const { queue, logger } = newQueue(database, url);
      expect(() => queue.enqueue(testEntry(1))).not.toThrow();
      queue.enqueue(testEntry(2));
      await queue.flush();
      expect(queue.stats).toMatchObject({ written: 0, droppedFailed: 2, inserts: 0 });
      expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
      expect(logger.records.find((r) => r.level === 'warn')?.obj).toMatchObject({ dropped: 2, droppedTotal: 2 });
      // The reason, never the statement's parameters (the bodies).
      expect(JSON.stringify(logger.records)).not.toContain('trace-1');
      expect(queue.writerInfo).toMatchObject({ mode: 'worker', workerRunning: true, restarts: 0 });

      await database.migrate(requestLogMigrations);
      queue.enqueue(testEntry(3));
      await queue.flush();
      expect(await database.count(requestLogs, (c) => eq(c.trace_id, 'trace-3'), { fresh: true })).toBe(1);
    });

    test('bodies structured clone refuses: sent as JSON text, or dropped and counted when not even that', async () => {
      const { database, url } = await fresh();
      const { queue, logger } = newQueue(database, url);
      queue.enqueue(testEntry(1, { requestBody: { model: 'm', hook: (() => 1) as never } }));
      queue.enqueue(testEntry(2, { requestBody: { model: 'm', big: 1n as never } }));
      queue.enqueue(testEntry(3));
      await queue.flush();
      expect(queue.stats).toMatchObject({ written: 2, droppedFailed: 1 });
      expect((await database.findOne(requestLogs, 'trace_id', 'trace-1', { fresh: true }))?.request_body).toBe('{"model":"m"}');
      expect(logger.records.find((r) => r.level === 'warn')?.obj).toMatchObject({ traceId: 'trace-2' });
    });

    test('close writes what is queued, closes the thread and terminates it', async () => {
      const { database, url } = await fresh();
      const before = started.length;
      const { queue } = newQueue(database, url);
      const worker = await startedWorker(before);
      expect(worker).toBeDefined();
      const gone = exited(worker);
      for (let i = 0; i < 30; i++) queue.enqueue(bigEntry(i));
      await queue.close();
      await gone; // the thread's `close` event fired
      expect(queue.writerInfo).toMatchObject({ mode: 'closed', workerRunning: false });
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(30);
      // After shutdown the queue still never throws; entries go to the main thread's connection.
      queue.enqueue(testEntry(99));
      await queue.flush();
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(31);
    });
  });
}

describe('LogQueue writer thread: failures and fallbacks', () => {
  const t = useTestDatabase('sqlite');

  test('a thread that dies is started again once; the batch in flight is sent again; a second death: main thread', async () => {
    const { database, url } = await t.fresh();
    await database.migrate(requestLogMigrations);
    const before = started.length;
    killNext = true;
    const { queue, logger } = newQueue(database, url, { batchSize: 200 });

    // Killed as soon as it starts, with the first batch handed over: nothing was stored, all is sent to the new one.
    for (let i = 0; i < 600; i++) queue.enqueue(bigEntry(i));
    await queue.flush();
    expect(killNext).toBe(false);
    expect(queue.writerInfo).toMatchObject({ mode: 'worker', workerRunning: true, restarts: 1 });
    const second = await startedWorker(before + 1);
    expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(600);
    expect(queue.stats).toMatchObject({ written: 600, droppedFailed: 0 });
    expect(logger.records.some((r) => r.msg === 'request log writer thread died; starting it again')).toBe(true);

    // The second death: batches are written on the main thread from then on.
    const gone = exited(second);
    second.terminate();
    await gone;
    await Bun.sleep(10);
    expect(queue.writerInfo).toMatchObject({ mode: 'main-thread', workerRunning: false, restarts: 1 });
    for (let i = 600; i < 650; i++) queue.enqueue(bigEntry(i));
    await queue.flush();
    expect(await database.count(requestLogs)).toBe(650);
    await Bun.sleep(50);
    expect(started.length).toBe(before + 2); // not started a third time
  });

  test('a thread that cannot open the database hands the work to the main thread', async () => {
    const { database } = await t.fresh();
    await database.migrate(requestLogMigrations);
    const { queue, logger } = newQueue(database, 'sqlite:/proc/no-such-dir/gateway.db');
    for (let i = 0; i < 20; i++) queue.enqueue(testEntry(i));
    await queue.flush();
    expect(await database.count(requestLogs)).toBe(20);
    expect(queue.writerInfo).toMatchObject({ mode: 'main-thread', workerRunning: false });
    expect(logger.records.find((r) => r.level === 'warn')?.msg).toContain('could not open the database');
  });

  test('sqlite::memory: is written on the main thread (another connection would see another database)', async () => {
    const database = await createDatabase('sqlite::memory:');
    await database.migrate(requestLogMigrations);
    const before = started.length;
    const { queue } = newQueue(database, 'sqlite::memory:', { batchSize: 500 });
    expect(queue.writerInfo).toMatchObject({ mode: 'main-thread', workerRunning: false });
    for (let i = 0; i < 1200; i++) queue.enqueue(bigEntry(i));
    await queue.flush();
    expect(started.length).toBe(before);
    expect(await database.count(requestLogs)).toBe(1200);
    // One statement per batch in the stats, written as transactions of 64 rows.
    expect(queue.stats).toMatchObject({ written: 1200, inserts: 3 });
    await database.close();
  });
});
