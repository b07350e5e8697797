import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import type { Database, Migration, MysqlDatabase, SqliteDatabase, TableDefBase, TransactionHelpers } from '@gateway/sdk';
import { createHelpers } from './helpers.ts';
import { migrateMysql, migrateSqlite } from './migrate.ts';
import { openMysqlPool, readerTarget } from './mysql.ts';
import { openSqlite } from './sqlite.ts';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, readerFromEnv, type ReaderOptions } from './url.ts';

export interface CreateDatabaseOptions {
  /** Read replica (DB_READER_*); MySQL only, ignored for SQLite. */
  reader?: ReaderOptions;
}

/**
 * Opens the database named by a DATABASE_URL. MySQL pools connect lazily: a wrong host shows on the first query
 * (the first `migrate`), not here.
 */
export async function createDatabase(url: string, opts: CreateDatabaseOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url);
  if (target.dialect === 'sqlite') {
    const client = openSqlite(target.path);
    const db = drizzleSqlite({ client });
    let closed = false;
    const helpers = createHelpers({ dialect: 'sqlite', db, reader: db });
    // One connection: a transaction holds it until it ends, so transactions queue behind each other.
    let queue: Promise<unknown> = Promise.resolve();
    const transaction = <T>(fn: (tx: TransactionHelpers) => Promise<T>): Promise<T> => {
      const run = queue.then(async () => {
        client.run('BEGIN IMMEDIATE');
        try {
          const result = await fn(helpers);
          client.run('COMMIT');
          return result;
        } catch (error) {
          if (client.inTransaction) client.run('ROLLBACK');
          throw error;
        }
      });
      queue = run.catch(() => undefined);
      return run;
    };
    const database: SqliteDatabase = {
      ...helpers,
      transaction,
      dialect: 'sqlite',
      db,
      reader: db,
      table: <T extends TableDefBase>(def: T) => def.sqlite,
      migrate: async (migrations: readonly Migration[]) => migrateSqlite(client, migrations),
      close: async () => {
        if (closed) return;
        closed = true;
        client.close();
      },
    };
    return database;
  }

  const pool = openMysqlPool(target);
  const readerPool = opts.reader ? openMysqlPool(readerTarget(target, opts.reader)) : undefined;
  const db = drizzleMysql({ client: pool });
  const reader = readerPool ? drizzleMysql({ client: readerPool }) : db;
  let closing: Promise<void> | undefined;
  const transaction = async <T>(fn: (tx: TransactionHelpers) => Promise<T>): Promise<T> => {
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      const txDb = drizzleMysql({ client: connection }) as unknown as MysqlDatabase['db'];
      try {
        const result = await fn(createHelpers({ dialect: 'mysql', db: txDb, reader: txDb }));
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback().catch(() => undefined);
        throw error;
      }
    } finally {
      connection.release();
    }
  };
  const database: MysqlDatabase = {
    ...createHelpers({ dialect: 'mysql', db, reader }),
    transaction,
    dialect: 'mysql',
    db,
    reader,
    table: <T extends TableDefBase>(def: T) => def.mysql,
    migrate: (migrations: readonly Migration[]) => migrateMysql(pool, migrations),
    close: () => (closing ??= Promise.all([pool.end(), readerPool?.end()]).then(() => undefined)),
  };
  return database;
}

/** DATABASE_URL (default `sqlite:./data/gateway.db`) and DB_READER_* from an environment. */
export function createDatabaseFromEnv(env: Readonly<Record<string, string | undefined>>): Promise<Database> {
  return createDatabase(env.DATABASE_URL || DEFAULT_DATABASE_URL, { reader: readerFromEnv(env) });
}

/** The migrator as a function, for callers holding a `Database`. */
export function migrate(database: Database, migrations: readonly Migration[]): Promise<string[]> {
  return database.migrate(migrations);
}
