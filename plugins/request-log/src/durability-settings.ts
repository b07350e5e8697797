/**
 * The request log's memory and disk bounds from the environment (README, "Request log"):
 *   LOG_QUEUE_MAX_BYTES     estimated bytes of entries held in memory (default 64 MiB); past it entries spill to the journal
 *   LOG_JOURNAL_DIR         where the journal lives (default: beside the SQLite file, else ./data); OFF: no journal
 *   LOG_JOURNAL_MAX_BYTES   the journal's disk budget (default 1 GiB); past it entries are dropped and counted
 *   LOG_JOURNAL_FSYNC       `batch` (default): each append is flushed to the device; `off`: left to the OS
 *   GATEWAY_LOG_WRITER_NICE, GATEWAY_LOG_WRITER_NICE_BEHIND   the writer thread's nice value (19), and while behind (0)
 * A malformed value stops the start (the plugin's setup fails with the reason): a durability bound must not be guessed.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { FsyncPolicy } from './journal.ts';
import { isMemoryUrl } from './queue.ts';

export interface DurabilitySettings {
  queueMaxBytes: number;
  /** The writer thread's nice value, normally and while the log is behind. */
  writerNice: { base: number; behind: number };
  /** Undefined: no journal (LOG_JOURNAL_DIR=OFF, or an in-memory database, whose rows a restart loses anyway). */
  journal?: { dir: string; maxBytes: number; fsync: FsyncPolicy };
}

const MIB = 1024 * 1024;

function bytes(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of bytes, at least ${min} (got ${JSON.stringify(value.slice(0, 50))})`);
  return n;
}

function nice(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < -20 || n > 19) throw new Error(`${name} must be a whole number from -20 to 19 (got ${JSON.stringify(value.slice(0, 50))})`);
  return n;
}

/** The journal's directory for this database: one per database, so that two gateways' journals never meet. */
function defaultJournalDir(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '').split('?')[0]!;
    return `${resolve(file)}.log-journal`;
  }
  // MySQL: the URL without credentials names the database.
  let key = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    key = `${url.host}${url.pathname}`;
  } catch {}
  return resolve('data', `request-log-journal-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`);
}

export function durabilityFromEnv(env: Record<string, string | undefined>, databaseUrl: string): DurabilitySettings {
  const queueMaxBytes = bytes('LOG_QUEUE_MAX_BYTES', env.LOG_QUEUE_MAX_BYTES, 64 * MIB, MIB);
  const dirSetting = env.LOG_JOURNAL_DIR?.trim();
  const maxBytes = bytes('LOG_JOURNAL_MAX_BYTES', env.LOG_JOURNAL_MAX_BYTES, 1024 * MIB, MIB);
  const fsyncSetting = (env.LOG_JOURNAL_FSYNC?.trim() || 'batch').toLowerCase();
  if (fsyncSetting !== 'batch' && fsyncSetting !== 'off') throw new Error(`LOG_JOURNAL_FSYNC must be batch or off (got ${JSON.stringify(fsyncSetting.slice(0, 50))})`);
  const writerNice = { base: nice('GATEWAY_LOG_WRITER_NICE', env.GATEWAY_LOG_WRITER_NICE, 19), behind: nice('GATEWAY_LOG_WRITER_NICE_BEHIND', env.GATEWAY_LOG_WRITER_NICE_BEHIND, 0) };
  if (dirSetting?.toUpperCase() === 'OFF' || (!dirSetting && isMemoryUrl(databaseUrl))) return { queueMaxBytes, writerNice };
  // A directory given serves one database: the journal goes in a sub-directory named after it.
  const dir = dirSetting ? join(resolve(dirSetting), defaultJournalDir(databaseUrl).split('/').pop()!) : defaultJournalDir(databaseUrl);
  return { queueMaxBytes, writerNice, journal: { dir, maxBytes, fsync: fsyncSetting } };
}
