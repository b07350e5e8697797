import { Database as BunSqlite } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** The page size a new database file is created with. */
export const SQLITE_PAGE_SIZE = 16_384;

/** Opens the embedded database: WAL so readers do not block the writer, and a busy timeout for other processes. */
export function openSqlite(path: string): BunSqlite {
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const client = new BunSqlite(path, { create: true, readwrite: true, strict: true });
  // The busy timeout first: switching to WAL takes a lock, and processes (or the log writer thread) opening the same
  // new file at once must wait for each other rather than fail with SQLITE_BUSY.
  client.run('PRAGMA busy_timeout = 5000');
  // 16 KiB pages instead of 4: a request-log row (about 2.5 KB with its bodies) then shares its page, and each
  // commit writes a quarter of the WAL frames; the log writer's CPU a row fell by about a third
  // (docs/performance.md, "SQLite page size"). Takes effect only on a new file: an existing one keeps its size.
  if (!memory) client.run(`PRAGMA page_size = ${SQLITE_PAGE_SIZE}`);
  if (!memory) client.run('PRAGMA journal_mode = WAL');
  // WAL makes NORMAL durable enough (a crash may lose the last commits, never corrupts).
  client.run('PRAGMA synchronous = NORMAL');
  return client;
}
