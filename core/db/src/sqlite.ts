import { Database as BunSqlite } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Opens the embedded database: WAL so readers do not block the writer, and a busy timeout for other processes. */
export function openSqlite(path: string): BunSqlite {
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const client = new BunSqlite(path, { create: true, readwrite: true, strict: true });
  // The busy timeout first: switching to WAL takes a lock, and processes (or the log writer thread) opening the same
  // new file at once must wait for each other rather than fail with SQLITE_BUSY.
  client.run('PRAGMA busy_timeout = 5000');
  if (!memory) client.run('PRAGMA journal_mode = WAL');
  // WAL makes NORMAL durable enough (a crash may lose the last commits, never corrupts).
  client.run('PRAGMA synchronous = NORMAL');
  return client;
}
