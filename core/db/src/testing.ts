/**
 * Test support: real databases for both dialects (a PluginApi for plugin tests is `testPluginApi` from
 * `@gateway/sdk/testing`). Suites run once per dialect; the MySQL
 * run uses a fresh database `gw_test_<random>` on TEST_MYSQL_URL (default the CI MariaDB) and drops it after, so
 * parallel runs do not collide. An unreachable MariaDB fails the suite: CI always provides it.
 */
import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Database, Dialect } from '@gateway/sdk';
import { createDatabase } from './database.ts';

export const DIALECTS: readonly Dialect[] = ['sqlite', 'mysql'];

const MYSQL_URL = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test';

export interface TestDatabase {
  database: Database;
  /** The URL, to open more connections to the same database (several "processes"). */
  url: string;
  /** Closes the connections this helper opened and removes the database. */
  drop(): Promise<void>;
}

async function mysqlAdmin<T>(fn: (conn: Awaited<ReturnType<typeof createConnection>>) => Promise<T>): Promise<T> {
  let conn: Awaited<ReturnType<typeof createConnection>> | undefined;
  try {
    conn = await createConnection({ uri: MYSQL_URL, connectTimeout: 5_000 });
  } catch (err) {
    throw new Error(`MariaDB/MySQL at ${MYSQL_URL.replace(/\/\/[^@]*@/, '//')} is not reachable; the MySQL suites need it: ${String(err)}`);
  }
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

/** A new, empty database of the dialect: a temporary SQLite file, or a new MySQL database. */
export async function openTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
    const url = `sqlite:${join(dir, 'gateway.db')}`;
    const database = await createDatabase(url);
    return {
      database,
      url,
      drop: async () => {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `gw_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await mysqlAdmin((conn) => conn.query(`CREATE DATABASE \`${name}\``));
  const u = new URL(MYSQL_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const database = await createDatabase(url);
  return {
    database,
    url,
    drop: async () => {
      await database.close();
      await mysqlAdmin((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
    },
  };
}

/**
 * Registers beforeAll/afterAll for a describe block: `t.database` is a new empty database of the dialect, and
 * `t.fresh()` gives another one (dropped with the suite) for tests that need an empty database.
 */
export function useTestDatabase(dialect: Dialect): { readonly database: Database; readonly url: string; fresh(): Promise<TestDatabase> } {
  const opened: TestDatabase[] = [];
  let main: TestDatabase | undefined;
  const fresh = async () => {
    const t = await openTestDatabase(dialect);
    opened.push(t);
    return t;
  };
  // A hang guard, not a timing check: creating and migrating a MariaDB database can pass bun's 5 s default on a
  // loaded 2-core CI machine.
  beforeAll(async () => {
    main = await fresh();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(opened.map((t) => t.drop()));
  });
  return {
    get database() {
      if (!main) throw new Error(`the ${dialect} test database did not open`);
      return main.database;
    },
    get url() {
      if (!main) throw new Error(`the ${dialect} test database did not open`);
      return main.url;
    },
    fresh,
  };
}
