// The request log loses nothing (issue #26), end to end on a SQLite file with the real server as a separate process:
// (1) the database locked by another connection mid-load (BEGIN EXCLUSIVE): the writer's inserts time out, entries
// go to the journal, /health says degraded, /metrics counts them; once the lock is released every request is in
// request_logs exactly once and nothing is counted as dropped. (2) a gateway killed with SIGKILL while its journal
// holds every row (the database locked), part of those rows already in the table (as when a replay's insert had
// committed and the cursor was not saved yet): the next process on the same database replays the journal, and each
// request has one row.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database as SQLite } from 'bun:sqlite';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { droppedOf, health, load, logMetrics, until } from './durability-helpers.ts';

const T = 120_000;

/** Another connection holding the database's write lock until `release`. */
function lock(file: string): { db: SQLite; release(): void } {
  const db = new SQLite(file);
  db.run('PRAGMA busy_timeout = 10000');
  db.run('BEGIN EXCLUSIVE');
  return {
    db,
    release() {
      db.run('COMMIT');
      db.close();
    },
  };
}

function counts(file: string, prefix: string): { rows: number; unique: number } {
  const db = new SQLite(file, { readonly: true });
  try {
    return db.query('SELECT COUNT(*) AS rows, COUNT(DISTINCT trace_id) AS "unique" FROM request_logs WHERE trace_id LIKE ?').get(`${prefix}-%`) as {
      rows: number;
      unique: number;
    };
  } finally {
    db.close();
  }
}

describe('request log durability on SQLite (gateway process)', () => {
  let mock: OpenAIMock;
  let dir: string;
  const gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
    dir = mkdtempSync(join(tmpdir(), 'gw-durability-e2e-'));
  });
  afterAll(async () => {
    for (const gw of gateways) if (gw.proc.exitCode === null) await gw.stop();
    await mock?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'the database locked by another connection mid-load: journaled, degraded, then every request logged once',
    async () => {
      const file = join(dir, 'locked.db');
      const gw = await startGatewayProcess({ DATABASE_URL: `sqlite:${file}` });
      gateways.push(gw);
      expect((await load(gw, mock.url, 'before', 100)).every((s) => s === 200)).toBe(true);
      await until('rows before the lock written', async () => counts(file, 'before').rows === 100, 20_000);

      const held = lock(file);
      let released = false;
      try {
        expect((await load(gw, mock.url, 'during', 300)).every((s) => s === 200)).toBe(true);
        // The writer waits out SQLite's busy timeout, retries once, then journals the batch and what follows it.
        const metrics = await until('entries journaled', async () => {
          const m = await logMetrics(gw);
          return (m.gateway_request_log_rows_journaled_total ?? 0) > 0 && m;
        }, 60_000);
        expect(metrics.gateway_request_log_journal_bytes).toBeGreaterThan(0);
        const degraded = await health(gw);
        expect(degraded.status).toBe('degraded');
        expect(degraded.requestLog?.reasons).toContain('replaying_journal');
        // More traffic while the journal holds records: it goes behind them.
        expect((await load(gw, mock.url, 'after', 100)).every((s) => s === 200)).toBe(true);
        held.release();
        released = true;
      } finally {
        if (!released) held.release();
      }
      for (const [prefix, n] of [['before', 100], ['during', 300], ['after', 100]] as const) {
        await until(`${prefix}: ${n} rows`, async () => counts(file, prefix).rows === n, 60_000);
        expect(counts(file, prefix)).toEqual({ rows: n, unique: n });
      }
      const after = await until('journal replayed', async () => {
        const m = await logMetrics(gw);
        return m.gateway_request_log_journal_pending_bytes === 0 && m;
      }, 30_000);
      expect(droppedOf(after)).toBe(0);
      expect(after.gateway_request_log_rows_replayed_total).toBe(after.gateway_request_log_rows_journaled_total);
      expect(await until('health ok', async () => (await health(gw)).status === 'ok' || undefined, 70_000)).toBe(true);
      await gw.stop();
    },
    T,
  );

  test(
    'a gateway killed with SIGKILL with its journal full of rows (some stored already) is restarted: each request has one row',
    async () => {
      const file = join(dir, 'killed.db');
      const first = await startGatewayProcess({ DATABASE_URL: `sqlite:${file}` });
      gateways.push(first);
      const held = lock(file);
      let released = false;
      try {
        expect((await load(first, mock.url, 'killed', 200)).every((s) => s === 200)).toBe(true);
        await until('every row journaled', async () => (await logMetrics(first)).gateway_request_log_rows_journaled_total === 200, 60_000);
        first.proc.kill('SIGKILL');
        await first.proc.exited;

        // 50 of the journaled rows reach the table directly, with their ids: a replay that committed, then died.
        const journalDir = `${file}.log-journal`;
        const segment = readdirSync(journalDir).find((n) => n.endsWith('.jsonl'))!;
        const lines = readFileSync(join(journalDir, segment), 'utf8').split('\n').filter(Boolean);
        expect(lines.length).toBe(200);
        const insert = held.db.prepare('INSERT INTO request_logs (id, trace_id, endpoint, method, path, status, latency_ms, retry_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
        for (const line of lines.slice(0, 50)) {
          const row = JSON.parse(line.slice(9)) as Record<string, string | number>;
          insert.run(row.id!, row.trace_id!, row.endpoint!, row.method!, row.path!, row.status!, row.latency_ms!, 0, row.created_at!);
        }
        held.release();
        released = true;
      } finally {
        if (!released) held.release();
      }
      expect(counts(file, 'killed').rows).toBe(50);

      const second = await startGatewayProcess({ DATABASE_URL: `sqlite:${file}` });
      gateways.push(second);
      await until('journal replayed by the next process', async () => {
        const m = await logMetrics(second);
        return m.gateway_request_log_rows_replayed_total === 200 && m.gateway_request_log_journal_pending_bytes === 0;
      }, 60_000);
      expect(counts(file, 'killed')).toEqual({ rows: 200, unique: 200 });
      expect(droppedOf(await logMetrics(second))).toBe(0);
      await second.stop();
    },
    T,
  );
});
