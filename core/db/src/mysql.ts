import { createPool, type Pool } from 'mysql2/promise';
import type { ReaderOptions } from './url.ts';
import type { WriterHealth } from './writer-health.ts';

export interface MysqlTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function openMysqlPool(target: MysqlTarget): Pool {
  return createPool({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
    charset: 'utf8mb4',
    connectionLimit: 10,
    connectTimeout: 5_000,
    // MySQL 8 would otherwise parse JSON itself and MariaDB would not; the column type parses it on both.
    jsonStrings: true,
    // Epoch-millisecond timestamps and counters never pass 2^53; plain numbers keep rows equal to SQLite's.
    supportBigNumbers: false,
    enableKeepAlive: true,
  });
}

/** The reader replica serves the writer's database under its own host and credentials. */
export function readerTarget(writer: MysqlTarget, reader: ReaderOptions): MysqlTarget {
  return {
    host: reader.host,
    port: reader.port ?? writer.port,
    user: reader.user ?? writer.user,
    password: reader.pass ?? writer.password,
    database: writer.database,
  };
}

/** The pool's entry points that reach the server; everything else (config, end, events) passes through as is. */
const GUARDED = new Set<PropertyKey>(['query', 'execute', 'getConnection']);

/**
 * The writer pool behind the HADR gate: while the writer is down its calls fail at once with the 503, and a
 * connection failure on any of them marks it down. A proxy, so that drizzle and callers reading pool settings
 * see the pool itself.
 */
export function guardPool(pool: Pool, health: WriterHealth): Pool {
  return new Proxy(pool, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!GUARDED.has(property)) return method.bind(target);
      return (...args: unknown[]) => health.run(async () => method.apply(target, args));
    },
  });
}
