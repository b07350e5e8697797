/**
 * The request log's memory and disk bounds from the environment (README, "Request log"):
 *   LOG_QUEUE_MAX_BYTES     estimated bytes of entries held in memory (default 64 MiB); past it entries spill to the journal
 *   LOG_JOURNAL_DIR         where the journal lives (default: beside the SQLite file, else ./data); OFF: no journal
 *   LOG_JOURNAL_MAX_BYTES   the journal's disk budget (default 1 GiB); past it entries are dropped and counted
 *   LOG_JOURNAL_FSYNC       `batch` (default): each append is flushed to the device; `off`: left to the OS
 * A malformed value stops the start (the plugin's setup fails with the reason): a durability bound must not be guessed.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { FsyncPolicy } from './journal.ts';
import { isMemoryUrl } from './queue.ts';

export interface DurabilitySettings {
  queueMaxBytes: number;
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
  if (dirSetting?.toUpperCase() === 'OFF' || (!dirSetting && isMemoryUrl(databaseUrl))) return { queueMaxBytes };
  // A directory given serves one database: the journal goes in a sub-directory named after it.
  const dir = dirSetting ? join(resolve(dirSetting), defaultJournalDir(databaseUrl).split('/').pop()!) : defaultJournalDir(databaseUrl);
  return { queueMaxBytes, journal: { dir, maxBytes, fsync: fsyncSetting } };
}
