import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import type { Database, Logger, Migration, SqliteDatabase, TableDefBase, TransactionHelpers } from '@gateway/sdk';
import { createHelpers } from './helpers.ts';
import { migrateSqlite } from './migrate.ts';
import { openSqlite } from './sqlite.ts';
import { DEFAULT_DATABASE_URL, hadrFromEnv, parseDatabaseUrl, readerFromEnv, type ReaderOptions } from './url.ts';
import type { WriterHealthOptions } from './writer-health.ts';

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

  // Loaded only here: the MySQL driver and its drizzle binding cost about 25 MB of memory in every process, so a
  // gateway on the embedded SQLite default never loads them.
  const { createMysqlDatabase } = await import('./mysql-database.ts');
  return createMysqlDatabase(target, opts);
}

/** DATABASE_URL (default `sqlite:./data/gateway.db`), DB_READER_* and MYSQL_WRITER_HADR_MODE from an environment. */
export function createDatabaseFromEnv(env: Readonly<Record<string, string | undefined>>, logger?: Pick<Logger, 'warn' | 'info'>): Promise<Database> {
  return createDatabase(env.DATABASE_URL || DEFAULT_DATABASE_URL, { reader: readerFromEnv(env), hadr: hadrFromEnv(env), logger });
}

/** The migrator as a function, for callers holding a `Database`. */
export function migrate(database: Database, migrations: readonly Migration[]): Promise<string[]> {
  return database.migrate(migrations);
}
