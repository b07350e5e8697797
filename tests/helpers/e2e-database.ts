/**
 * Databases for end-to-end suites that start the real server: a fresh SQLite file or a fresh MariaDB/MySQL
 * database (`gw_e2e_<random>` on 127.0.0.1:3306 unless TEST_MYSQL_URL says otherwise), to hand to the gateway as
 * DATABASE_URL and to read back with plain SQL once the gateway has stopped.
 */
import { Database as SQLite } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';

export type E2EDialect = 'sqlite' | 'mysql';
export const E2E_DIALECTS: readonly E2EDialect[] = ['sqlite', 'mysql'];

const MYSQL_URL = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/mysql';

export type Row = Record<string, unknown>;

export interface E2EDatabase {
  dialect: E2EDialect;
  /** DATABASE_URL for the gateway. */
  url: string;
  /** Rows of a query, values as the driver gives them (JSON columns may be strings). */
  query(sql: string): Promise<Row[]>;
  /** Names of every table. */
  tables(): Promise<string[]>;
  /** Removes the file or the database. */
  drop(): Promise<void>;
}

async function mysqlAdmin<T>(fn: (conn: Awaited<ReturnType<typeof createConnection>>) => Promise<T>): Promise<T> {
  const conn = await createConnection({ uri: MYSQL_URL, connectTimeout: 5_000 });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

export async function createE2EDatabase(dialect: E2EDialect): Promise<E2EDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-e2e-db-'));
    const file = join(dir, 'gateway.db');
    const withDb = <T>(fn: (db: SQLite) => T): T => {
      const db = new SQLite(file, { readonly: true });
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    return {
      dialect,
      url: `sqlite:${file}`,
      query: async (sql) => withDb((db) => db.query(sql).all() as Row[]),
      tables: async () =>
        withDb((db) => (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name)),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `gw_e2e_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await mysqlAdmin((conn) => conn.query(`CREATE DATABASE \`${name}\``));
  const u = new URL(MYSQL_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const withConn = async <T>(fn: (conn: Awaited<ReturnType<typeof createConnection>>) => Promise<T>): Promise<T> => {
    const conn = await createConnection({ uri: url, connectTimeout: 5_000, dateStrings: true, supportBigNumbers: true, bigNumberStrings: false });
    try {
      return await fn(conn);
    } finally {
      await conn.end();
    }
  };
  return {
    dialect,
    url,
    query: (sql) => withConn(async (conn) => (await conn.query(sql))[0] as Row[]),
    tables: () => withConn(async (conn) => ((await conn.query('SHOW TABLES'))[0] as Row[]).map((r) => String(Object.values(r)[0]))),
    drop: () => mysqlAdmin((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``)).then(() => undefined),
  };
}

/** A JSON column as an object, whether the driver parsed it or not. */
export function jsonColumn<T = unknown>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return JSON.parse(value) as T;
  if (value instanceof Uint8Array) return JSON.parse(new TextDecoder().decode(value)) as T;
  return value as T;
}

/** Every value of every row as text, for "this secret appears nowhere" checks. */
export function rowsText(rows: Row[]): string {
  return rows
    .map((r) =>
      Object.values(r)
        .map((v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)))
        .join('\u0000'),
    )
    .join('\n');
}

/**
 * A local port with nothing listening on it (a server is opened there and closed again): a target that refuses
 * connections, or a PORT for the gateway.
 */
export async function freePort(): Promise<number> {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = server.port as number;
  await server.stop(true);
  return port;
}
