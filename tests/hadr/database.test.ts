// HADR mode at the `Database` level, on real MariaDB servers this test starts and kills: a writer with a binlog and
// a reader that replicates it (MariaDB binlog replication). With the writer killed (SIGKILL, a crash): health is
// degraded, writes fail at once with database_writer_unavailable (503), reads (fresh ones included) come from the
// reader; with it restarted, the background probe reconnects and writes go through again, without reopening.
// Without HADR mode nothing changes: the driver's own error, health always ok.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createDatabase, writerUnavailableIn } from '@gateway/db';
import { col, type Database, defineTable, eq, GatewayError } from '@gateway/sdk';
import { caughtUp, MARIADB_MISSING, type MariaDbServer, replicate, startMariaDb } from '../helpers/mariadb-process.ts';

const things = defineTable('hadr_things', {
  id: col.id(),
  name: col.string(64).unique(),
  n: col.int().default(0),
});

const T = 60_000;

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (!(await ok())) {
    if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await Bun.sleep(50);
  }
  return Date.now() - start;
}

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function expectUnavailable(error: unknown): void {
  expect(error).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).code).toBe('database_writer_unavailable');
  expect((error as GatewayError).status).toBe(503);
}

describe.skipIf(MARIADB_MISSING !== undefined)(
  `HADR mode: a writer that dies and comes back, a replica that serves reads${MARIADB_MISSING ? ` (skipped: ${MARIADB_MISSING})` : ''}`,
  () => {
    let writer: MariaDbServer;
    let reader: MariaDbServer;
    let hadr: Database;
    let plain: Database;

    beforeAll(async () => {
      // One after the other, each assigned at once: afterAll removes whatever did start.
      writer = await startMariaDb({ serverId: 1, binlog: true });
      reader = await startMariaDb({ serverId: 2, readOnly: true });
      await replicate(reader, writer);
      await writer.query('CREATE DATABASE hadr');
      const readerOptions = { host: '127.0.0.1', port: reader.port, user: 'root' };
      hadr = await createDatabase(writer.url('hadr'), { reader: readerOptions, hadr: { heartbeatMs: 300, probeMs: 200 } });
      plain = await createDatabase(writer.url('hadr'), { reader: readerOptions });
      await hadr.migrate([{ id: 'hadr/things', tables: [things] }]);
      await hadr.insert(things, [{ name: 'one' }, { name: 'two' }]);
      await caughtUp(reader, writer);
      // A row only the reader has (root may write on a read-only replica): proves where a read was answered.
      await reader.query("INSERT INTO hadr.hadr_things (id, name, n) VALUES ('reader-only-row', 'reader-only', 0)");
    }, T);

    afterAll(async () => {
      await hadr?.close();
      await plain?.close();
      await Promise.all([writer?.destroy(), reader?.destroy()]);
    }, T);

    test('writer up: health ok; plain reads from the reader, fresh reads from the writer', async () => {
      expect(hadr.health()).toEqual({ status: 'ok' });
      expect((await hadr.findOne(things, 'name', 'reader-only'))?.id).toBe('reader-only-row');
      expect(await hadr.findOne(things, 'name', 'reader-only', { fresh: true })).toBeUndefined();
      expect(await hadr.count(things, undefined, { fresh: true })).toBe(2);
      // A statement the writer refuses (duplicate key) is the caller's error, not a writer outage.
      const duplicate = await failure(hadr.insert(things, { name: 'one' }));
      expect(duplicate).not.toBeInstanceOf(GatewayError);
      expect(hadr.health()).toEqual({ status: 'ok' });
      await expect(hadr.transaction(async (tx) => tx.insert(things, [{ name: 'tx-new' }, { name: 'two' }]))).rejects.not.toBeInstanceOf(GatewayError);
      expect(hadr.health()).toEqual({ status: 'ok' });
      expect(await hadr.count(things, undefined, { fresh: true })).toBe(2);
    }, T);

    test('writer killed: writes fail at once with 503, health degraded, reads (fresh too) come from the reader', async () => {
      await writer.kill('SIGKILL');
      // The first write notices (or the heartbeat did already): 503, not the driver's error.
      expectUnavailable(await failure(hadr.insert(things, { name: 'lost' })));
      const health = hadr.health();
      expect(health.status).toBe('degraded');
      expect(health.status === 'degraded' && health.reason).toMatch(/writer database unavailable/);

      // Fail fast: no connection attempt while down.
      const started = performance.now();
      for (const write of [
        () => hadr.insert(things, { name: 'lost-2' }),
        () => hadr.update(things, { n: 1 }, (c) => eq(c.name, 'one')),
        () => hadr.delete(things, (c) => eq(c.name, 'two')),
        () => hadr.transaction(async (tx) => tx.insert(things, { name: 'lost-3' })),
        () => hadr.migrate([{ id: 'hadr/more', tables: [things] }]),
      ])
        expectUnavailable(await failure(write()));
      expect(performance.now() - started).toBeLessThan(1_000); // five writes, none waiting on a connection
      // drizzle used directly goes through the same gate (the 503 is inside drizzle's own error).
      if (hadr.dialect === 'mysql') expect(writerUnavailableIn(await failure(hadr.db.select().from(hadr.table(things))))).toBeDefined();

      expect((await hadr.findOne(things, 'name', 'one'))?.name).toBe('one');
      expect((await hadr.findOne(things, 'name', 'reader-only', { fresh: true }))?.id).toBe('reader-only-row');
      expect((await hadr.select(things, { fresh: true })).map((r) => r.name).sort()).toEqual(['one', 'reader-only', 'two']);
      expect(await hadr.count(things, undefined, { fresh: true })).toBe(3);
    }, T);

    test('without HADR mode: the driver error as before, health always ok', async () => {
      const error = await failure(plain.insert(things, { name: 'plain-lost' }));
      expect(error).not.toBeInstanceOf(GatewayError);
      expect(plain.health()).toEqual({ status: 'ok' });
    }, T);

    test('writer restarted: the probe reconnects by itself, writes go through and replicate', async () => {
      await writer.start();
      const took = await until('health ok again', () => hadr.health().status === 'ok', 10_000);
      expect(took).toBeLessThan(5_000);
      expect(await hadr.insert(things, { name: 'after' })).toBe(1);
      expect(await hadr.update(things, { n: 5 }, (c) => eq(c.name, 'one'))).toBe(1);
      await caughtUp(reader, writer);
      expect((await hadr.findOne(things, 'name', 'after'))?.name).toBe('after');
      expect((await hadr.findOne(things, 'name', 'one'))?.n).toBe(5);
      // The plain database reconnects as it always did.
      expect(await plain.insert(things, { name: 'plain-after' })).toBe(1);
    }, T);

    test('an idle writer that dies is noticed by the heartbeat, without any call', async () => {
      await writer.kill('SIGKILL');
      await until('degraded without a call', () => hadr.health().status === 'degraded', 5_000);
      await writer.start();
      await until('ok again', () => hadr.health().status === 'ok', 5_000);
      expect(await hadr.insert(things, { name: 'after-2' })).toBe(1);
    }, T);
  },
);
