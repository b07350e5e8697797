/**
 * Test support: real databases for both dialects, and a small PluginApi. Suites run once per dialect; the MySQL
 * run uses a fresh database `gw_test_<random>` on TEST_MYSQL_URL (default the CI MariaDB) and drops it after, so
 * parallel runs do not collide. An unreachable MariaDB fails the suite: CI always provides it.
 */
import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Database, Dialect, Logger, PluginApi, ServiceToken, Stage, StateStore } from '@gateway/sdk';
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
  let conn;
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
  beforeAll(async () => {
    main = await fresh();
  });
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

// ---- a PluginApi for plugin tests ------------------------------------------------------------------------------

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object | string;
  msg?: string;
}

export function testLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: LogRecord['level']) => (obj: object | string, msg?: string) => void records.push({ level, obj, msg });
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface TestPluginApi {
  api: PluginApi;
  stages: Stage[];
  /** Services by id: those given, and those the plugin provided. */
  services: Map<string, unknown>;
  logger: Logger & { records: LogRecord[] };
  /** Runs the plugin's onReady hooks, as the loader does once every plugin is set up. */
  ready(): Promise<void>;
  /** Runs the plugin's onClose callbacks, as the server does at shutdown. */
  close(): Promise<void>;
}

/**
 * What `setup` needs: services (by id: `{ database }`), provide, stage, onReady, onClose, logger, env. Other
 * registrations throw.
 */
export function testPluginApi(options: { name?: string; services?: Record<string, unknown>; env?: Record<string, string | undefined> } = {}): TestPluginApi {
  const services = new Map<string, unknown>(Object.entries(options.services ?? {}));
  const stages: Stage[] = [];
  const readyHooks: (() => Promise<void> | void)[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  const logger = testLogger();
  const unsupported = (what: string) => () => {
    throw new Error(`${what} is not available in the test plugin api`);
  };
  // The test gave the service under the token's id: its type is the test's word.
  const optional = <T>(token: ServiceToken<T>): T | undefined => services.get(token.id) as T | undefined;
  const name = options.name ?? 'test-plugin';
  const api: PluginApi = {
    name,
    env: options.env ?? {},
    logger,
    get state(): StateStore {
      throw new Error('state is not available in the test plugin api');
    },
    service<T>(token: ServiceToken<T>): T {
      if (!services.has(token.id)) throw new Error(`no service "${token.id}" in the test plugin api`);
      return optional(token) as T;
    },
    optional,
    provide<T>(token: ServiceToken<T>, value: T): void {
      if (services.has(token.id)) throw new Error(`service "${token.id}" from plugin ${name} is already provided`);
      services.set(token.id, value);
    },
    stage: (stage) => void stages.push(stage),
    onReady: (fn) => void readyHooks.push(fn),
    onClose: (fn) => void closers.push(fn),
    provider: unsupported('provider'),
    strategy: unsupported('strategy'),
    guardrail: unsupported('guardrail'),
    route: unsupported('route'),
  };
  return {
    api,
    stages,
    services,
    logger,
    ready: async () => {
      for (const fn of readyHooks.splice(0)) await fn();
    },
    close: async () => {
      for (const fn of closers) await fn();
    },
  };
}
