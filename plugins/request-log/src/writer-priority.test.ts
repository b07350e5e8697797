/**
 * The writer thread's priority (queue.ts updatePriority, worker-writer.ts setPriority): raised as soon as the queue
 * passes its "behind" mark, even while the thread is stuck in a batch, and lowered again once the log has caught up.
 * A real writer thread on a SQLite file; the thread's nice value is read from /proc. The values only ever lower the
 * thread's priority (5 → 10 → 15), which needs no privilege.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database as SqliteClient } from 'bun:sqlite';
import { createDatabase, databaseThreads } from '@gateway/db';
import { testLogger } from '@gateway/sdk/testing';
import { LogQueue } from './queue.ts';
import { requestLogStatus } from './status.ts';
import { requestLogMigrations } from './table.ts';
import { testEntry } from './test-request.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A thread's nice value: field 19 of /proc/self/task/<tid>/stat (counted after the parenthesised name). */
function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let waited = 0; waited < 10_000; waited += 5) {
    const value = read();
    if (value !== undefined) return value;
    await Bun.sleep(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test.skipIf(process.platform !== 'linux')('the writer is raised at once when the queue falls behind, even in the middle of a batch, and lowered once it caught up (Linux only: thread nice values)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-writer-priority-'));
  const url = `sqlite:${join(dir, 'gateway.db')}`;
  const database = await createDatabase(url);
  await database.migrate(requestLogMigrations);
  // The thread starts at nice 5 (read from the environment when its module loads).
  const before = process.env.GATEWAY_LOG_WRITER_NICE;
  process.env.GATEWAY_LOG_WRITER_NICE = '5';
  const queue = new LogQueue(database, {
    logger: testLogger(),
    intervalMs: 60_000,
    batchSize: 10,
    worker: { url, module: databaseThreads.module },
    writerNice: { base: 15, behind: 10 },
  });
  cleanups.push(async () => {
    await queue.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const tid = await until(() => queue.writerInfo.threadId, 'the writer thread');
  const behindGauge = () => /^gateway_request_log_writer_behind (\d+)$/m.exec(requestLogStatus(queue).metrics())?.[1];
  if (before === undefined) delete process.env.GATEWAY_LOG_WRITER_NICE;
  else process.env.GATEWAY_LOG_WRITER_NICE = before;
  expect(niceOf(tid)).toBe(5);

  // Another connection holds the file's write lock: the thread's first batch waits inside SQLite (busy timeout), so
  // the thread reads no message until the lock is released.
  const blocker = new SqliteClient(join(dir, 'gateway.db'));
  blocker.run('PRAGMA busy_timeout = 5000');
  blocker.run('BEGIN IMMEDIATE');
  try {
    for (let i = 0; i < 10; i++) queue.enqueue(testEntry(i));
    await until(() => (queue.size === 0 ? true : undefined), 'the first batch to be taken');
    await Bun.sleep(50);
    expect(niceOf(tid)).toBe(5);
    // 5 MiB of answers: past the 4 MiB mark. No await between the enqueue and the check: the queue sets the thread's
    // priority itself, synchronously.
    expect(behindGauge()).toBe('0');
    for (let i = 10; i < 15; i++) queue.enqueue(testEntry(i, { responseBody: 'x'.repeat(1024 * 1024) }));
    expect(niceOf(tid)).toBe(10);
    expect(behindGauge()).toBe('1');
  } finally {
    blocker.run('COMMIT');
    blocker.close();
  }
  await queue.flush();
  // Caught up: the drain loop lowers it to the base value.
  await until(() => (niceOf(tid) === 15 ? true : undefined), 'nice 15 once the queue is empty');
  expect(queue.stats.written).toBe(15);
  expect(behindGauge()).toBe('0');
});
