/**
 * The migrator: applies migrations not yet recorded in `_migrations`, in the order given. Several processes may
 * start at once: SQLite serialises them with BEGIN IMMEDIATE (each migration is one transaction, DDL included);
 * MySQL with a named lock (GET_LOCK) held on one connection while the pending migrations run.
 */
import type { Database as BunSqlite } from 'bun:sqlite';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Dialect, Migration } from '@gateway/sdk';

const LOCK_TIMEOUT_S = 120;

export function statementsOf(migration: Migration, dialect: Dialect): string[] {
  return [...(migration.tables ?? []).flatMap((t) => t.ddl(dialect)), ...(migration.statements?.[dialect] ?? [])];
}

function checkIds(migrations: readonly Migration[]): void {
  const seen = new Set<string>();
  for (const m of migrations) {
    if (!m.id || m.id.length > 191) throw new Error(`migration id must be 1-191 characters: ${JSON.stringify(m.id)}`);
    if (seen.has(m.id)) throw new Error(`migration id ${m.id} appears twice`);
    seen.add(m.id);
  }
}

export function migrateSqlite(client: BunSqlite, migrations: readonly Migration[]): string[] {
  checkIds(migrations);
  client.run('CREATE TABLE IF NOT EXISTS "_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "applied_at" INTEGER NOT NULL)');
  const applied: string[] = [];
  const isApplied = client.query<{ id: string }, [string]>('SELECT "id" FROM "_migrations" WHERE "id" = ?');
  for (const migration of migrations) {
    const apply = client.transaction(() => {
      // Checked inside the write transaction: another process may have applied it while this one waited.
      if (isApplied.get(migration.id)) return;
      for (const statement of statementsOf(migration, 'sqlite')) client.run(statement);
      client.run('INSERT INTO "_migrations" ("id", "applied_at") VALUES (?, ?)', [migration.id, Date.now()]);
      applied.push(migration.id);
    });
    apply.immediate();
  }
  return applied;
}

export async function migrateMysql(pool: Pool, migrations: readonly Migration[]): Promise<string[]> {
  checkIds(migrations);
  const conn = await pool.getConnection();
  try {
    const [[{ name }]] = await conn.query<(RowDataPacket & { name: string })[]>('SELECT DATABASE() AS name');
    // GET_LOCK names are server-wide (64 characters at most): one lock per database.
    const lock = `gw_migrate:${name}`.slice(0, 64);
    const [[{ ok }]] = await conn.query<(RowDataPacket & { ok: number | null })[]>('SELECT GET_LOCK(?, ?) AS ok', [lock, LOCK_TIMEOUT_S]);
    if (ok !== 1) throw new Error(`could not take the migration lock ${lock} within ${LOCK_TIMEOUT_S} s`);
    try {
      await conn.query(
        'CREATE TABLE IF NOT EXISTS `_migrations` (`id` VARCHAR(191) NOT NULL PRIMARY KEY, `applied_at` BIGINT NOT NULL) ' +
          'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
      );
      const [rows] = await conn.query<(RowDataPacket & { id: string })[]>('SELECT `id` FROM `_migrations`');
      const done = new Set(rows.map((r) => r.id));
      const applied: string[] = [];
      for (const migration of migrations) {
        if (done.has(migration.id)) continue;
        // MySQL commits DDL implicitly, so a migration is not atomic; its statements are written to be re-runnable.
        for (const statement of statementsOf(migration, 'mysql')) await conn.query(statement);
        await conn.query('INSERT INTO `_migrations` (`id`, `applied_at`) VALUES (?, ?)', [migration.id, Date.now()]);
        applied.push(migration.id);
      }
      return applied;
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => undefined);
    }
  } finally {
    conn.release();
  }
}
