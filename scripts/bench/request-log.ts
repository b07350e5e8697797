/**
 * The request log's writer: the longest pause of the main thread (a 1 ms interval) while 5000 realistic entries are
 * enqueued and written, with the writer thread (a SQLite file) and with the main-thread fallback
 * (`sqlite::memory:`, small transactions). Best of three runs: a loaded machine can pause any thread now and then; a
 * blocking writer pauses it every run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, databaseThreads } from '@gateway/db';
import { testLogger } from '@gateway/sdk/testing';
import type { Database } from '@gateway/sdk';
import type { LogEntry } from '../../plugins/request-log/src/entry.ts';
import { LogQueue } from '../../plugins/request-log/src/queue.ts';
import { requestLogMigrations, requestLogs } from '../../plugins/request-log/src/table.ts';
import { testEntry } from '../../plugins/request-log/src/test-request.ts';
import { budget, check, figure } from './measure.ts';

const N = 5_000;
const LIMIT_MS = 20;

const body = (i: number) => ({ model: 'gpt-test', messages: [{ role: 'user', content: `question ${i} `.repeat(40) }] });
const answer = (i: number) =>
  JSON.stringify({ id: `c${i}`, model: 'gpt-test', choices: [{ message: { content: 'answer '.repeat(100) } }], usage: { prompt_tokens: i, completion_tokens: 2, total_tokens: i + 2 } });
const bigEntry = (i: number): LogEntry =>
  testEntry(i, {
    requestBody: new TextEncoder().encode(JSON.stringify(body(i))),
    responseBody: answer(i),
    metadata: { team: 'a' },
    attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: 30 }],
  });

/** Longest pause of a 1 ms interval on this thread while `work` runs. */
async function longestPause(work: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await Bun.sleep(5);
  last = performance.now();
  longest = 0;
  await work();
  longest = Math.max(longest, performance.now() - last);
  clearInterval(timer);
  return longest;
}

async function bestOfThree(label: string, database: Database, url: string, mode: 'worker' | 'main-thread'): Promise<void> {
  const queue = new LogQueue(database, { logger: testLogger(), intervalMs: 60_000, retryDelayMs: 10, worker: { url, module: databaseThreads.module } });
  check(queue.writerInfo.mode === mode, `${label}: the writer runs as ${mode} (${queue.writerInfo.mode})`);
  const pauses: number[] = [];
  for (let run = 0; run < 3; run++) {
    const entries = Array.from({ length: N }, (_, i) => bigEntry(run * N + i));
    Bun.gc(true);
    pauses.push(
      await longestPause(async () => {
        for (const entry of entries) queue.enqueue(entry);
        await queue.flush();
      }),
    );
    check((await database.count(requestLogs)) === (run + 1) * N, `${label}: every entry written`);
  }
  await queue.close();
  for (const [run, pause] of pauses.entries()) figure(`${label}: longest main-thread pause, run ${run + 1}`, pause, 'ms');
  budget(`${label}: longest main-thread pause over ${N} entries, best of three`, Math.min(...pauses), LIMIT_MS, 'ms');
}

const dir = mkdtempSync(join(tmpdir(), 'bench-request-log-'));
try {
  const url = `sqlite:${join(dir, 'gateway.db')}`;
  const file = await createDatabase(url);
  await file.migrate(requestLogMigrations);
  await bestOfThree('writer thread', file, url, 'worker');
  await file.close();

  const memory = await createDatabase('sqlite::memory:');
  await memory.migrate(requestLogMigrations);
  await bestOfThree('main-thread fallback (sqlite::memory:)', memory, 'sqlite::memory:', 'main-thread');
  await memory.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
