/** A MySQL/MariaDB `Database` (database.ts loads this file only for a mysql: DATABASE_URL). */
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import type { MysqlDatabase, Migration, TableDefBase, TransactionHelpers } from '@gateway/sdk';
import type { CreateDatabaseOptions } from './database.ts';
import { guardHelpers } from './guard.ts';
import { createHelpers } from './helpers.ts';
import { migrateMysql } from './migrate.ts';
import { guardPool, openMysqlPool, readerTarget } from './mysql.ts';
import type { MysqlTarget } from './mysql.ts';
import { WriterHealth } from './writer-health.ts';

const OK = { status: 'ok' } as const;

export function createMysqlDatabase(target: MysqlTarget, opts: CreateDatabaseOptions): MysqlDatabase {
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
