/**
 * The host's `databaseThreads` service: what a plugin that writes from a worker thread with its own connection (the
 * request log) needs to know of DATABASE_URL, and this module, which such a thread imports to open it.
 */
import { resolve } from 'node:path';
import type { Database, DatabaseConnection, DatabaseThreads } from '@gateway/sdk';
import { createDatabase } from './database.ts';
import { DEFAULT_DATABASE_URL, type DatabaseTarget, parseDatabaseUrl, readerFromEnv } from './url.ts';

const isMemoryUrl = (url: string): boolean => url.startsWith('sqlite:') && url.includes(':memory:');

/** The pool's connection settings (mysql2 internals, read defensively): undefined when they cannot be read. */
function mysqlConfig(database: Database): { host?: string; port?: number; database?: string } | undefined {
  if (database.dialect !== 'mysql') return undefined;
  const pool = database.db.$client as unknown as { pool?: { config?: { connectionConfig?: { host?: string; port?: number; database?: string } } } };
  return pool.pool?.config?.connectionConfig;
}

function mismatch({ url }: DatabaseConnection, database: Database): string | undefined {
  if (isMemoryUrl(url)) return 'an in-memory database cannot be shared with another thread';
  let target: DatabaseTarget;
  try {
    target = parseDatabaseUrl(url);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  if (target.dialect !== database.dialect) return `DATABASE_URL is ${target.dialect}, the database service is ${database.dialect}`;
  if (target.dialect === 'sqlite' && database.dialect === 'sqlite') {
    const filename = database.db.$client.filename;
    if (filename && resolve(filename) !== resolve(target.path)) return 'DATABASE_URL names another SQLite file than the database service';
    return undefined;
  }
  if (target.dialect === 'mysql') {
    const config = mysqlConfig(database);
    if (config?.database !== undefined && config.database !== target.database) return 'DATABASE_URL names another MySQL database than the database service';
    if (config?.host !== undefined && config.host !== target.host) return 'DATABASE_URL names another MySQL host than the database service';
    if (config?.port !== undefined && config.port !== target.port) return 'DATABASE_URL names another MySQL port than the database service';
  }
  return undefined;
}

/** Called in the worker thread (through `databaseThreads.module`): the thread's own connection. */
export function openDatabase(connection: DatabaseConnection): Promise<Database> {
  return createDatabase(connection.url, { reader: connection.reader });
}

export const databaseThreads: DatabaseThreads = {
  fromEnv: (env) => ({ url: env.DATABASE_URL || DEFAULT_DATABASE_URL, reader: readerFromEnv(env) }),
  mismatch,
  module: import.meta.url,
};
