/**
 * The request log's sustained write rate: N realistic entries (a ~600-byte chat request, a ~900-byte answer, usage,
 * metadata, one attempt: about 1.5 KB a row, as in the issue-26 soak) enqueued as fast as the queue takes them, then
 * flushed, through the same LogQueue and writer thread the gateway uses, on a fresh SQLite file and a fresh MariaDB
 * database. Prints rows per second per dialect (the best of ROUNDS rounds: a shared machine only ever slows it).
 *
 *   npx bun scripts/log-throughput.ts                     # both dialects, 50 000 rows, 3 rounds
 *   N=20000 ROUNDS=1 DIALECTS=sqlite npx bun scripts/log-throughput.ts
 *
 * MariaDB: TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/mysql) names a server where a database
 * `gw_logtp_<random>` is created and dropped. GATEWAY_LOG_WRITER_NICE applies as in the gateway (0 here by default:
 * the figure is the writer's own speed, not what it gets of a CPU shared with requests). The table carries the
 * indexes a gateway's has: the request log's and analytics' (ANALYTICS_INDEXES=0 leaves analytics' out).
 *
 * On a machine shared with other work the rate moves with the load; the CPU time a row costs moves much less, so each
 * round also prints this process's CPU per row (both threads: queue, encoding, writer, driver) and, with
 * MARIADB_PID=<pid of mariadbd> (and read access to its /proc entry), the server's (other clients' work included).
 * LOG_BODY_COMPRESSION applies as in the gateway; the bytes a row takes in the database are printed at the end.
 */
import { Database } from 'bun:sqlite';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { createDatabase, databaseThreads } from '@gateway/db';
import { testLogger } from '@gateway/sdk/testing';
import type { LogEntry } from '../plugins/request-log/src/entry.ts';
import { LogQueue } from '../plugins/request-log/src/queue.ts';
import { requestLogMigrations, requestLogs } from '../plugins/request-log/src/table.ts';
import { analyticsMigrations } from '../admin/analytics/src/indexes.ts';
import { testEntry } from '../plugins/request-log/src/test-request.ts';
import { bodyCompressionFromEnv } from '../plugins/request-log/src/body-compression.ts';

process.env.GATEWAY_LOG_WRITER_NICE ??= '0';
const N = Number(process.env.N ?? 50_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DIALECTS = (process.env.DIALECTS ?? 'sqlite,mysql').split(',');
const MYSQL_URL = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/mysql';
const ANALYTICS_INDEXES = process.env.ANALYTICS_INDEXES !== '0';
const MARIADB_PID = process.env.MARIADB_PID;

/** CPU seconds (user + system) a process has used, from /proc; undefined where it cannot be read. */
function processCpuSeconds(pid: string): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const encoder = new TextEncoder();
const question = 'Summarise the following paragraph in two sentences please. '.repeat(8);
const answerText = 'The paragraph says that the thing is what it is, and then some more. '.repeat(12);

export function realisticEntry(i: number): LogEntry {
  const request = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${i} ${question}` }], temperature: 0.2 });
  const answer = JSON.stringify({
    id: `chatcmpl-${i}`,
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: answerText }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 180, total_tokens: 300 },
  });
  return testEntry(i, {
    organisationId: '0b8f6c5e-4c1e-4c3a-9a53-1f2d3c4b5a69',
    workspaceId: '6a1d2c3b-4e5f-4a7b-8c9d-0e1f2a3b4c5d',
    apiKeyId: '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a',
    provider: 'openai',
    model: 'gpt-4o-mini',
    requestBody: encoder.encode(request),
    requestContentType: 'application/json',
    responseBody: answer,
    usageFrom: { usage: { promptTokens: 120, completionTokens: 180, totalTokens: 300 } },
    costCents: 0.0126,
    priced: true,
    metadata: { team: 'search', env: 'prod' },
    attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: 30 }],
    createdAt: Date.now(),
  });
}

async function measure(label: string, url: string, close: () => Promise<void>, size: () => Promise<number>): Promise<void> {
  const database = await createDatabase(url);
  await database.migrate(ANALYTICS_INDEXES ? [...requestLogMigrations, ...analyticsMigrations] : requestLogMigrations);
  // The whole run fits in memory: the figure is the writer's rate, not the byte budget's.
  const queue = new LogQueue(database, {
    logger: testLogger(),
    maxBytes: 2 ** 31,
    worker: { url, module: databaseThreads.module },
    bodyCompression: bodyCompressionFromEnv(process.env),
  });
  if (queue.writerInfo.mode !== 'worker') throw new Error(`${label}: the writer is not a thread (${queue.writerInfo.mode})`);
  const rates: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const entries = Array.from({ length: N }, (_, i) => realisticEntry(round * N + i));
      Bun.gc(true);
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const serverBefore = label === 'mariadb' && MARIADB_PID ? processCpuSeconds(MARIADB_PID) : undefined;
      // Enqueued in slices with a yield between them, as requests arrive: the queue's own bounds apply.
      for (let i = 0; i < N; i += 500) {
        for (let k = i; k < Math.min(N, i + 500); k++) queue.enqueue(entries[k]!);
        await new Promise((r) => setImmediate(r));
      }
      await queue.flush();
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const serverAfter = serverBefore === undefined ? undefined : processCpuSeconds(MARIADB_PID!);
      const perRow = (s: number) => `${((s * 1e6) / N).toFixed(1)} µs`;
      const server = serverBefore !== undefined && serverAfter !== undefined ? `, mariadbd CPU ${perRow(serverAfter - serverBefore)} a row` : '';
      rates.push(N / seconds);
      console.log(
        `${label} round ${round + 1}: ${N} rows in ${seconds.toFixed(2)} s = ${Math.round(N / seconds)} rows/s; ` +
          `gateway CPU ${perRow((cpu.user + cpu.system) / 1e6)} a row${server}`,
      );
    }
    const rows = await database.count(requestLogs, undefined, { fresh: true });
    const s = queue.stats;
    console.log(`${label}: rows in table ${rows} (expected ${N * ROUNDS}); written ${s.written}; dropped ${s.droppedOverflow + s.droppedFailed}`);
    console.log(`${label}: BEST ${Math.round(Math.max(...rates))} rows/s`);
    const bytes = await size();
    console.log(`${label}: ${bytes} bytes in the database, ${Math.round(bytes / rows)} bytes a row (table and indexes)`);
  } finally {
    await queue.close();
    await database.close();
    await close();
  }
}

if (import.meta.main) {
  if (DIALECTS.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'gw-logtp-'));
    const file = join(dir, 'gateway.db');
    const size = async () => {
      // The WAL checkpointed into the file first: its size is then the table's.
      const db = new Database(file);
      db.run('PRAGMA wal_checkpoint(TRUNCATE)');
      db.close();
      return statSync(file).size;
    };
    await measure('sqlite', `sqlite:${file}`, async () => rmSync(dir, { recursive: true, force: true }), size);
  }
  if (DIALECTS.includes('mysql')) {
    const name = `gw_logtp_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const admin = await createConnection({ uri: MYSQL_URL });
    await admin.query(`CREATE DATABASE \`${name}\``);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${name}`;
    const size = async () => {
      await admin.query(`ANALYZE TABLE \`${name}\`.request_logs`);
      const [rows] = await admin.query(
        `SELECT DATA_LENGTH + INDEX_LENGTH AS bytes FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'request_logs'`,
        [name],
      );
      return Number((rows as { bytes: number | string }[])[0]?.bytes ?? 0);
    };
    await measure(
      'mariadb',
      url.toString(),
      async () => {
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
        await admin.end();
      },
      size,
    );
  }
}
