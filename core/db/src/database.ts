import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import type { Database, Logger, Migration, MysqlDatabase, SqliteDatabase, TableDefBase, TransactionHelpers } from '@gateway/sdk';
import { guardHelpers } from './guard.ts';
import { createHelpers } from './helpers.ts';
import { migrateMysql, migrateSqlite } from './migrate.ts';
import { guardPool, openMysqlPool, readerTarget } from './mysql.ts';
import { openSqlite } from './sqlite.ts';
import { DEFAULT_DATABASE_URL, hadrFromEnv, parseDatabaseUrl, readerFromEnv, type ReaderOptions } from './url.ts';
import { WriterHealth, type WriterHealthOptions } from './writer-health.ts';

export interface CreateDatabaseOptions {
  /** Read replica (DB_READER_*); MySQL only, ignored for SQLite. */
  reader?: ReaderOptions;
  /**
   * MYSQL_WRITER_HADR_MODE=ON: track the writer's health (see writer-health.ts); `true`, or the probe timings.
   * MySQL only.
   */
  hadr?: boolean | WriterHealthOptions;
  /** Where HADR mode says that the writer went down and came back. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

const OK = { status: 'ok' } as const;

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
      health: () => OK,
      close: async () => {
        if (closed) return;
        closed = true;
        client.close();
      },
    };
    return database;
  }

  const writerPool = openMysqlPool(target);
  const readerPool = opts.reader ? openMysqlPool(readerTarget(target, opts.reader)) : undefined;
  const health = opts.hadr
    ? new WriterHealth(() => writerPool.query({ sql: 'SELECT 1', timeout: 3_000 }), {
        ...(typeof opts.hadr === 'object' ? opts.hadr : {}),
        logger: opts.logger,
      })
    : undefined;
  // In HADR mode every use of the writer pool passes the health gate (helpers, transactions, migrations, drizzle).
  const pool = health ? guardPool(writerPool, health) : writerPool;
  const db = drizzleMysql({ client: pool });
  const reader = readerPool ? drizzleMysql({ client: readerPool }) : db;
  let closing: Promise<void> | undefined;
  const runTransaction = async <T>(fn: (tx: TransactionHelpers) => Promise<T>): Promise<T> => {
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
  const helpers = createHelpers({ dialect: 'mysql', db, reader, writerDown: health ? () => health.isDown : undefined });
  const database: MysqlDatabase = {
    ...(health ? guardHelpers(helpers, readerPool !== undefined) : helpers),
    transaction: health ? (fn) => health.run(() => runTransaction(fn)) : runTransaction,
    dialect: 'mysql',
    db,
    reader,
    table: <T extends TableDefBase>(def: T) => def.mysql,
    migrate: (migrations: readonly Migration[]) => (health ? health.run(() => migrateMysql(pool, migrations)) : migrateMysql(pool, migrations)),
    health: () => health?.health() ?? OK,
    close: () => {
      health?.stop();
      return (closing ??= Promise.all([writerPool.end(), readerPool?.end()]).then(() => undefined));
    },
  };
  return database;
}

/** DATABASE_URL (default `sqlite:./data/gateway.db`), DB_READER_* and MYSQL_WRITER_HADR_MODE from an environment. */
export function createDatabaseFromEnv(env: Readonly<Record<string, string | undefined>>, logger?: Pick<Logger, 'warn' | 'info'>): Promise<Database> {
  return createDatabase(env.DATABASE_URL || DEFAULT_DATABASE_URL, { reader: readerFromEnv(env), hadr: hadrFromEnv(env), logger });
}

/** The migrator as a function, for callers holding a `Database`. */
export function migrate(database: Database, migrations: readonly Migration[]): Promise<string[]> {
  return database.migrate(migrations);
}
