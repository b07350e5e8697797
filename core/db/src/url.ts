/** DATABASE_URL and DB_READER_* (INTERFACE.md) as connection settings. */

export interface ReaderOptions {
  host: string;
  user?: string;
  pass?: string;
  port?: number;
}

export type DatabaseTarget =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'mysql'; host: string; port: number; user: string; password: string; database: string };

export const DEFAULT_DATABASE_URL = 'sqlite:./data/gateway.db';

/** `sqlite:<path>`, `sqlite::memory:`, or `mysql://user:pass@host:port/db`. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path) throw new Error('DATABASE_URL: sqlite: needs a path, e.g. sqlite:./data/gateway.db or sqlite::memory:');
    return { dialect: 'sqlite', path };
  }
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const u = new URL(url);
    const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
    if (!database) throw new Error('DATABASE_URL: mysql:// needs a database name, e.g. mysql://user:pass@host:3306/gateway');
    return {
      dialect: 'mysql',
      host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: u.port ? Number(u.port) : 3306,
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database,
    };
  }
  throw new Error(`DATABASE_URL must start with sqlite: or mysql:// (got ${url.split(':')[0]}:…)`);
}

/** The reader replica settings, when DB_READER_HOST is set. */
export function readerFromEnv(env: Readonly<Record<string, string | undefined>>): ReaderOptions | undefined {
  const host = env.DB_READER_HOST;
  if (!host) return undefined;
  return {
    host,
    user: env.DB_READER_USER || undefined,
    pass: env.DB_READER_PASS,
    port: env.DB_READER_PORT ? Number(env.DB_READER_PORT) : undefined,
  };
}

/** MYSQL_WRITER_HADR_MODE=ON (default OFF). */
export function hadrFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  return (env.MYSQL_WRITER_HADR_MODE ?? 'OFF').trim().toUpperCase() === 'ON';
}
