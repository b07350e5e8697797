import { describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { asc, col, defineTable, desc, eq, gt, type Database } from '@gateway/sdk';
import { Database as BunSqlite } from 'bun:sqlite';
import { createDatabase } from './database.ts';
import { SQLITE_PAGE_SIZE } from './sqlite.ts';
import { DIALECTS, useTestDatabase } from './testing.ts';

const things = defineTable(
  'things',
  {
    id: col.id(),
    owner_id: col.ref(),
    name: col.string(64).unique(),
    kind: col.enum(['small', 'large']).default('small'),
    body: col.text().nullable(),
    count: col.int().default(0),
    big: col.bigint().nullable(),
    enabled: col.bool().default(true),
    data: col.json<{ a: number; tags: string[]; nested?: { ok: boolean } } | string | null>().nullable(),
    list: col.json<string[]>().default(() => []),
    created_at: col.timestamp().default(Date.now),
    expires_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['owner_id', 'created_at'] }, { columns: ['owner_id', 'kind'], unique: false }] },
);

const migrations = [{ id: 'test/things', tables: [things] }];

for (const dialect of DIALECTS) {
  describe(`database [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    const db = (): Database => t.database;

    test('creates the tables once; the DDL runs again without harm', async () => {
      expect(await db().migrate(migrations)).toEqual(['test/things']);
      expect(await db().migrate(migrations)).toEqual([]);
      const d = db();
      for (const statement of things.ddl(dialect)) {
        if (d.dialect === 'sqlite') d.db.$client.run(statement);
        else await d.db.$client.query(statement);
      }
      expect(await db().count(things)).toBe(0);
    });

    test('insert and select round-trip every column kind', async () => {
      const now = Date.now();
      const inserted = await db().insert(things, [
        {
          owner_id: 'o1',
          name: 'alpha',
          body: `${'x'.repeat(100_000)} 🚀 é`,
          count: 7,
          big: 2 ** 52 + 1,
          enabled: false,
          data: { a: 1, tags: ['x', 'y'], nested: { ok: true } },
          list: ['one'],
          expires_at: now + 1000,
        },
        { owner_id: 'o1', name: 'beta', kind: 'large', data: 'just a string' },
        { owner_id: 'o2', name: 'Alpha' },
      ]);
      expect(inserted).toBe(3);

      const alpha = await db().findOne(things, 'name', 'alpha');
      expect(alpha).toBeDefined();
      expect(alpha!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(alpha!.body).toBe(`${'x'.repeat(100_000)} 🚀 é`);
      expect(alpha!.count).toBe(7);
      expect(alpha!.big).toBe(2 ** 52 + 1);
      expect(alpha!.enabled).toBe(false);
      expect(alpha!.data).toEqual({ a: 1, tags: ['x', 'y'], nested: { ok: true } });
      expect(alpha!.list).toEqual(['one']);
      expect(alpha!.kind).toBe('small');
      expect(alpha!.created_at).toBeGreaterThanOrEqual(now - 5);
      expect(typeof alpha!.created_at).toBe('number');
      expect(alpha!.expires_at).toBe(now + 1000);

      const beta = await db().findOne(things, 'name', 'beta');
      expect(beta).toMatchObject({ kind: 'large', data: 'just a string', list: [], enabled: true, count: 0, big: null, body: null, expires_at: null });

      // Binary collation: names differing in case are distinct on both dialects.
      const upper = await db().findOne(things, 'name', 'Alpha');
      expect(upper?.owner_id).toBe('o2');
      expect(upper?.data).toBeNull();
    });

    test('select with where, order, limit, offset; count', async () => {
      const rows = await db().select(things, { where: (c) => eq(c.owner_id, 'o1'), orderBy: (c) => asc(c.name) });
      expect(rows.map((r) => r.name)).toEqual(['alpha', 'beta']);
      const page = await db().select(things, { orderBy: (c) => [desc(c.name)], limit: 1, offset: 1 });
      expect(page.map((r) => r.name)).toEqual(['alpha']);
      expect(await db().count(things, (c) => eq(c.owner_id, 'o1'))).toBe(2);
      expect(await db().count(things, (c) => gt(c.count, 5), { fresh: true })).toBe(1);
    });

    test('unique keys: a duplicate throws, or is skipped with ignoreDuplicates', async () => {
      await expect(db().insert(things, { owner_id: 'o3', name: 'alpha' })).rejects.toThrow();
      expect(await db().insert(things, [{ owner_id: 'o3', name: 'alpha' }, { owner_id: 'o3', name: 'gamma' }], { ignoreDuplicates: true })).toBe(1);
    });

    test('an over-long string is refused on both dialects', async () => {
      await expect(db().insert(things, { owner_id: 'o4', name: 'n'.repeat(65) })).rejects.toThrow();
      expect(await db().count(things, (c) => eq(c.owner_id, 'o4'))).toBe(0);
    });

    test('update and delete report the rows matched and refuse an empty condition', async () => {
      expect(await db().update(things, { enabled: true, data: { a: 2, tags: [] } }, (c) => eq(c.name, 'alpha'))).toBe(1);
      expect((await db().findOne(things, 'name', 'alpha'))?.data).toEqual({ a: 2, tags: [] });
      await expect(db().update(things, { count: 1 }, () => undefined)).rejects.toThrow(/empty/);
      await expect(db().delete(things, () => undefined)).rejects.toThrow(/empty/);
      expect(await db().delete(things, (c) => eq(c.owner_id, 'o3'))).toBe(1);
      expect(await db().count(things)).toBe(3);
    });

    test('a transaction lands whole or not at all; concurrent transactions do not mix', async () => {
      const before = await db().count(things);
      await expect(
        db().transaction(async (tx) => {
          await tx.insert(things, { owner_id: 'tx', name: 'tx-one' });
          expect(await tx.count(things, (c) => eq(c.owner_id, 'tx'))).toBe(1); // its own write is visible
          await tx.insert(things, { owner_id: 'tx', name: 'alpha' }); // duplicate name: the whole transaction fails
        }),
      ).rejects.toThrow();
      expect(await db().count(things)).toBe(before);
      const results = await Promise.all(
        [1, 2, 3].map((n) =>
          db().transaction(async (tx) => {
            await tx.insert(things, { owner_id: 'tx', name: `tx-${n}` });
            await tx.update(things, { count: n }, (c) => eq(c.name, `tx-${n}`));
            if (n === 2) throw new Error('second fails');
            return n;
          }).catch((e: Error) => e.message),
        ),
      );
      expect(results).toEqual([1, 'second fails', 3]);
      const rows = await db().select(things, { where: (c) => eq(c.owner_id, 'tx'), orderBy: (c) => asc(c.name), fresh: true });
      expect(rows.map((r) => [r.name, r.count])).toEqual([['tx-1', 1], ['tx-3', 3]]);
      await db().delete(things, (c) => eq(c.owner_id, 'tx'));
    });

    test('large batches are split below the parameter limit', async () => {
      const rows = Array.from({ length: 3000 }, (_, i) => ({ owner_id: 'bulk', name: `bulk-${i}` }));
      expect(await db().insert(things, rows)).toBe(3000);
      expect(await db().count(things, (c) => eq(c.owner_id, 'bulk'))).toBe(3000);
    });

    test('table() gives the dialect table for direct drizzle queries', async () => {
      const d = db();
      const rows =
        d.dialect === 'sqlite'
          ? await d.db.select({ name: d.table(things).name }).from(d.table(things)).where(eq(d.table(things).name, 'beta'))
          : await d.db.select({ name: d.table(things).name }).from(d.table(things)).where(eq(d.table(things).name, 'beta'));
      expect(rows).toEqual([{ name: 'beta' }]);
    });
  });
}

describe('database [mysql] with a reader', () => {
  const t = useTestDatabase('mysql');

  test('reads go to the reader pool; fresh reads to the writer', async () => {
    const u = new URL(t.url);
    const withReader = await createDatabase(t.url, { reader: { host: u.hostname, user: 'root', port: Number(u.port || 3306) } });
    try {
      expect(withReader.reader).not.toBe(withReader.db);
      await withReader.migrate(migrations);
      await withReader.insert(things, { owner_id: 'r', name: 'replicated' });
      expect((await withReader.findOne(things, 'name', 'replicated'))?.owner_id).toBe('r');
      expect((await withReader.findOne(things, 'name', 'replicated', { fresh: true }))?.owner_id).toBe('r');
    } finally {
      await withReader.close();
    }
  });
});

describe('database [sqlite] files', () => {
  test('sqlite::memory: works; a file database creates its folder and uses WAL', async () => {
    const memory = await createDatabase('sqlite::memory:');
    await memory.migrate(migrations);
    await memory.insert(things, { owner_id: 'm', name: 'mem' });
    expect(await memory.count(things)).toBe(1);
    await memory.close();

    const dir = `${tmpdir()}/gw-db-${crypto.randomUUID()}`;
    const file = await createDatabase(`sqlite:${dir}/nested/gateway.db`);
    try {
      expect(file.dialect).toBe('sqlite');
      if (file.dialect !== 'sqlite') return;
      const mode = file.db.$client.query('PRAGMA journal_mode').get() as { journal_mode: string };
      expect(mode.journal_mode).toBe('wal');
      expect(await Bun.file(`${dir}/nested/gateway.db`).exists()).toBe(true);
    } finally {
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a new file gets 16 KiB pages; a file created with 4 KiB pages keeps them and its rows', async () => {
    const dir = `${tmpdir()}/gw-db-${crypto.randomUUID()}`;
    const pageSize = (db: Database) => (db.dialect === 'sqlite' ? (db.db.$client.query('PRAGMA page_size').get() as { page_size: number }).page_size : 0);
    try {
      const fresh = await createDatabase(`sqlite:${dir}/new.db`);
      await fresh.migrate(migrations);
      expect(pageSize(fresh)).toBe(SQLITE_PAGE_SIZE);
      await fresh.close();

      // An existing database, as an older gateway created it: 4 KiB pages, WAL, a row.
      const old = new BunSqlite(`${dir}/old.db`, { create: true });
      old.run('PRAGMA page_size = 4096');
      old.run('PRAGMA journal_mode = WAL');
      old.run('CREATE TABLE kept (v TEXT)');
      old.run("INSERT INTO kept VALUES ('still here')");
      old.close();
      const reopened = await createDatabase(`sqlite:${dir}/old.db`);
      expect(pageSize(reopened)).toBe(4096);
      if (reopened.dialect === 'sqlite') expect(reopened.db.$client.query('SELECT v FROM kept').get()).toEqual({ v: 'still here' });
      await reopened.migrate(migrations);
      await reopened.insert(things, { owner_id: 'o', name: 'after' });
      expect(await reopened.count(things)).toBe(1);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
