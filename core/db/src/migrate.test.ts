import { describe, expect, test } from 'bun:test';
import { sql, type Database } from '@gateway/sdk';
import { createDatabase } from './database.ts';
import { migrations, notes } from './test-fixtures/migrations.ts';
import { DIALECTS, useTestDatabase } from './testing.ts';

const ids = migrations.map((m) => m.id);
const child = new URL('./test-fixtures/migrate-child.ts', import.meta.url).pathname;

async function recorded(database: Database): Promise<string[]> {
  const rows =
    database.dialect === 'sqlite'
      ? database.db.all<{ id: string }>(sql`SELECT id FROM _migrations ORDER BY id`)
      : ((await database.db.execute(sql`SELECT id FROM _migrations ORDER BY id`))[0] as unknown as { id: string }[]);
  return rows.map((r) => r.id);
}

for (const dialect of DIALECTS) {
  describe(`migrate [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('applies each migration once and records it', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(migrations.slice(0, 1))).toEqual([ids[0]!]);
      expect(await database.migrate(migrations)).toEqual(ids.slice(1));
      expect(await database.migrate(migrations)).toEqual([]);
      expect(await recorded(database)).toEqual(ids);
      await database.insert(notes, { text: 'hello' });
      expect((await database.select(notes))[0]?.text).toBe('hello');
    });

    test('two migrate calls at once on one database apply everything exactly once', async () => {
      const { database } = await t.fresh();
      const [a, b] = await Promise.all([database.migrate(migrations), database.migrate(migrations)]);
      expect([...a, ...b].sort()).toEqual([...ids].sort());
      expect(await recorded(database)).toEqual(ids);
    });

    test('two connections at once (as two processes in one) apply everything exactly once', async () => {
      const { url, database } = await t.fresh();
      const [one, two] = await Promise.all([createDatabase(url), createDatabase(url)]);
      try {
        const [a, b] = await Promise.all([one.migrate(migrations), two.migrate(migrations)]);
        expect([...a, ...b].sort()).toEqual([...ids].sort());
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
      expect(await recorded(database)).toEqual(ids);
    });

    test('four processes starting at once apply everything exactly once', async () => {
      const { url, database } = await t.fresh();
      const procs = Array.from({ length: 4 }, () =>
        Bun.spawn([process.execPath, child, url], { stdout: 'pipe', stderr: 'pipe' }),
      );
      const results = await Promise.all(
        procs.map(async (p) => {
          const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
          if (code !== 0) throw new Error(`migrate child exited ${code}: ${err}`);
          return JSON.parse(out.trim().split('\n').at(-1)!) as string[];
        }),
      );
      expect(results.flat().sort()).toEqual([...ids].sort());
      expect(await recorded(database)).toEqual(ids);
    });

    test('a failing migration is not recorded and stops the ones after it', async () => {
      const { database } = await t.fresh();
      const broken = [
        migrations[0]!,
        { id: 'test/bad', statements: { sqlite: ['CREATE TABLE nope ('], mysql: ['CREATE TABLE nope ('] } },
        migrations[1]!,
      ];
      await expect(database.migrate(broken)).rejects.toThrow();
      expect(await recorded(database)).toEqual([ids[0]!]);
    });

    test('refuses duplicate ids', async () => {
      await expect(t.database.migrate([migrations[0]!, migrations[0]!])).rejects.toThrow(/twice/);
    });
  });
}
