/**
 * The queue with a journal (issue #26): nothing dropped while the database fails or falls behind, replayed in order
 * once it works, across a restart, with no duplicate rows; only a full disk budget drops (counted). The database is
 * real (SQLite and MariaDB); its failures are an `insert` that throws while `down` is set (the end-to-end tests in
 * tests/logs/durability*.test.ts lock and kill real databases).
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, type Database, type DatabaseHelpers } from '@gateway/sdk';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testLogger } from '@gateway/sdk/testing';
import { Journal } from './journal.ts';
import { withRowId } from './queued.ts';
import { LogQueue } from './queue.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testEntry } from './test-request.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function journalBase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-durability-'));
  dirs.push(dir);
  return join(dir, 'journal');
}

/** The database's insert, failing while `down` is true. */
type Faulty = Pick<DatabaseHelpers, 'insert'> & { down: boolean; calls: number };
function faulty(database: Database): Faulty {
  const out: Faulty = {
    down: false,
    calls: 0,
    insert: ((...args: Parameters<DatabaseHelpers['insert']>) => {
      out.calls++;
      return out.down ? Promise.reject(new Error('connect ECONNREFUSED (test)')) : database.insert(...args);
    }) as DatabaseHelpers['insert'],
  };
  return out;
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await Bun.sleep(20);
  }
}

const latencies = async (database: Database) =>
  (await database.select(requestLogs, { orderBy: (c) => asc(c.latency_ms), fresh: true })).map((r) => r.latency_ms);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

for (const dialect of DIALECTS) {
  describe(`request log durability [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    async function fresh(): Promise<Database> {
      const { database } = await t.fresh();
      await database.migrate(requestLogMigrations);
      return database;
    }
    const options = { retryDelayMs: 5, maxBackoffMs: 50, intervalMs: 10 };

    test('a database that fails: entries are journaled, not dropped; /health degraded; replayed once it works, each row once', async () => {
      const database = await fresh();
      const db = faulty(database);
      const journal = Journal.open(journalBase(), { maxBytes: 100_000_000, fsync: 'batch' });
      const queue = new LogQueue(db, { logger: testLogger(), journal, ...options });
      for (let i = 0; i < 50; i++) queue.enqueue(testEntry(i));
      await queue.flush();
      expect(await database.count(requestLogs)).toBe(50);

      db.down = true;
      for (let i = 50; i < 300; i++) queue.enqueue(testEntry(i));
      await queue.flush();
      await until('entries journaled', () => queue.stats.journaled === 250);
      expect(queue.dropped).toBe(0);
      expect(queue.journalBytes).toBeGreaterThan(0);
      expect(queue.health()).toMatchObject({ status: 'degraded', dropped: 0 });
      expect(queue.health().reasons).toEqual(['database_failing', 'replaying_journal']);
      // While the journal holds records, new entries go behind them (one order).
      for (let i = 300; i < 320; i++) queue.enqueue(testEntry(i));
      await until('new entries journaled behind', () => queue.stats.journaled === 270);

      db.down = false;
      await until('journal replayed', () => queue.journalPendingBytes === 0 && queue.stats.replayed === 270);
      expect(await latencies(database)).toEqual(range(0, 320));
      expect(queue.health()).toMatchObject({ status: 'ok', reasons: [] });
      expect(queue.stats).toMatchObject({ written: 50, journaled: 270, replayed: 270, droppedFailed: 0, droppedJournalFull: 0 });
      await queue.close();
    });

    test('entries queued behind a failing batch follow it into the journal, without a flush or a later entry', async () => {
      const database = await fresh();
      const db = faulty(database);
      const journal = Journal.open(journalBase(), { maxBytes: 100_000_000, fsync: 'off' });
      const queue = new LogQueue(db, { logger: testLogger(), journal, ...options, batchSize: 10 });
      db.down = true;
      for (let i = 0; i < 25; i++) queue.enqueue(testEntry(i));
      await until('every entry journaled', () => queue.stats.journaled === 25);
      expect(queue.size).toBe(0);
      db.down = false;
      await until('replayed', () => queue.stats.replayed === 25);
      expect(await latencies(database)).toEqual(range(0, 25));
      await queue.close();
    });

    test('past the byte budget entries spill to the journal instead of being dropped', async () => {
      const database = await fresh();
      const db = faulty(database);
      const journal = Journal.open(journalBase(), { maxBytes: 100_000_000, fsync: 'off' });
      // Ten bodiless entries (1 KiB each, estimated) fit in memory.
      const queue = new LogQueue(db, { logger: testLogger(), journal, maxBytes: 10 * 1024, ...options, intervalMs: 60_000, batchSize: 10_000 });
      for (let i = 0; i < 200; i++) queue.enqueue(testEntry(i));
      expect(queue.size).toBe(200); // enqueue itself does no I/O: the spill runs after
      await queue.flush();
      expect(queue.stats.journaled).toBeGreaterThan(0);
      await until('all written', async () => (await database.count(requestLogs, undefined, { fresh: true })) === 200);
      expect(queue.dropped).toBe(0);
      expect(await latencies(database)).toEqual(range(0, 200));
      await queue.close();
    });

    test('replay skips rows stored already (the write had succeeded, its answer was lost): no duplicates, no stuck journal', async () => {
      const database = await fresh();
      const db = faulty(database);
      const dir = journalBase();
      const journal = Journal.open(dir, { maxBytes: 100_000_000, fsync: 'batch' });
      const queue = new LogQueue(db, { logger: testLogger(), journal, ...options });
      db.down = true;
      const entries = range(0, 40).map((i) => withRowId(testEntry(i)));
      for (const entry of entries) queue.enqueue(entry);
      await queue.flush();
      await until('journaled', () => queue.stats.journaled === 40);
      await queue.close();
      // Half of them reached the table after all (same ids): the replay must neither fail on them nor add them twice.
      const { toRow } = await import('./row.ts');
      await database.insert(requestLogs, entries.slice(0, 20).map((e) => ({ ...toRow(e, 65_536), id: e.rowId })));

      // A restart: another queue on the same journal directory replays what the first left.
      const again = new LogQueue(database, { logger: testLogger(), journal: Journal.open(dir, { maxBytes: 100_000_000, fsync: 'batch' }), ...options });
      await until('replayed after the restart', () => again.journalPendingBytes === 0 && again.stats.replayed === 40);
      expect(await latencies(database)).toEqual(range(0, 40));
      expect(again.dropped).toBe(0);
      await again.close();
    });

    test('only a full disk budget drops entries, counted; /health says dropping', async () => {
      const database = await fresh();
      const db = faulty(database);
      const journal = Journal.open(journalBase(), { maxBytes: 5_000, fsync: 'off' });
      const logger = testLogger();
      const queue = new LogQueue(db, { logger, journal, ...options });
      db.down = true;
      for (let i = 0; i < 200; i++) queue.enqueue(testEntry(i, { responseBody: 'x'.repeat(100) }));
      await queue.flush();
      await until('all journaled or dropped', () => queue.stats.journaled + queue.stats.droppedJournalFull === 200);
      expect(queue.stats.journaled).toBeGreaterThan(0);
      expect(queue.stats.droppedJournalFull).toBeGreaterThan(0);
      expect(queue.journalBytes).toBeLessThanOrEqual(5_000);
      expect(queue.health().reasons).toContain('dropping');
      expect(logger.records.some((r) => r.msg === 'request log journal full; dropping entries')).toBe(true);
      db.down = false;
      await until('replayed', () => queue.journalPendingBytes === 0);
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(queue.stats.journaled);
      await queue.close();
    });
  });
}
