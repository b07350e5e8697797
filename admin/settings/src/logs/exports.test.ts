// The export runner's sweep on both dialects, with the time moved by hand: a pending or running job whose runner
// stopped beating is marked failed as interrupted and its partial file removed, a job still beating is left alone;
// finished exports past the retention lose their record and file, younger ones keep both; files no export names are
// removed once old, other files never. And migration 0006 adds the runner's columns to a table 0005 made.
import { describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import type { NewRow } from '@gateway/sdk';
import { testLogger } from '@gateway/sdk/testing';
import { logExports, settingsMigrations } from '../tables.ts';
import { INTERRUPTED, LogExportRunner, STALE_MS } from './exports.ts';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 26, 12);

function job(over: Partial<NewRow<typeof logExports>>): NewRow<typeof logExports> {
  return {
    id: crypto.randomUUID(),
    organisation_id: 'org-x',
    requested_by_api_key_id: 'key-x',
    format: 'csv',
    query: {},
    status: 'succeeded',
    rows: 1,
    created_at: NOW - 2 * HOUR,
    completed_at: NOW - HOUR,
    ...over,
  };
}

for (const dialect of DIALECTS) {
  describe(`log export sweep [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('interrupted jobs fail with a clear error, live ones stay; old exports and old orphan files go', async () => {
      const { database } = await t.fresh();
      await database.migrate(settingsMigrations);
      const dir = mkdtempSync(join(tmpdir(), 'gw-export-sweep-'));
      try {
        const runner = new LogExportRunner(database, testLogger(), { dir, retentionMs: 24 * HOUR, now: () => NOW });
        const jobs = {
          deadRunning: job({ status: 'running', runner_id: 'dead', heartbeat_at: NOW - STALE_MS - 1, completed_at: null, rows: null }),
          deadPending: job({ status: 'pending', created_at: NOW - STALE_MS - 1, completed_at: null, rows: null }),
          liveRunning: job({ status: 'running', runner_id: 'alive', heartbeat_at: NOW - STALE_MS + 1000, completed_at: null, rows: null }),
          newPending: job({ status: 'pending', created_at: NOW - 1000, completed_at: null, rows: null }),
          expired: job({ completed_at: NOW - 24 * HOUR - 1 }),
          expiredFailed: job({ status: 'failed', error: 'boom', rows: null, completed_at: NOW - 25 * HOUR }),
          kept: job({ completed_at: NOW - 24 * HOUR + 60_000 }),
        };
        await database.insert(logExports, Object.values(jobs));
        const file = (id: string) => join(dir, `${id}.csv`);
        for (const j of Object.values(jobs)) writeFileSync(file(j.id!), 'partial or whole');
        const oldOrphan = join(dir, `${crypto.randomUUID()}.jsonl`);
        const newOrphan = join(dir, `${crypto.randomUUID()}.jsonl`);
        const notOurs = join(dir, 'notes.txt');
        for (const path of [oldOrphan, newOrphan, notOurs]) writeFileSync(path, 'x');
        const old = (NOW - 24 * HOUR - STALE_MS - 1000) / 1000;
        for (const path of [oldOrphan, notOurs, file(jobs.kept.id!)]) utimesSync(path, old, old);

        expect(await runner.sweep()).toEqual({ interrupted: 2, expired: 2, orphanFiles: 1 });

        const rows = new Map((await database.select(logExports, { fresh: true })).map((r) => [r.id, r]));
        for (const name of ['deadRunning', 'deadPending'] as const) {
          expect([name, rows.get(jobs[name].id!)?.status, rows.get(jobs[name].id!)?.error, rows.get(jobs[name].id!)?.completed_at]).toEqual([name, 'failed', INTERRUPTED, NOW]);
          expect([name, existsSync(file(jobs[name].id!))]).toEqual([name, false]);
        }
        for (const name of ['liveRunning', 'newPending'] as const) {
          expect([name, rows.get(jobs[name].id!)?.status, existsSync(file(jobs[name].id!))]).toEqual([name, jobs[name].status, true]);
        }
        for (const name of ['expired', 'expiredFailed'] as const) expect([name, rows.has(jobs[name].id!), existsSync(file(jobs[name].id!))]).toEqual([name, false, false]);
        // Its file is old, but its record still names it.
        expect([rows.get(jobs.kept.id!)?.status, existsSync(file(jobs.kept.id!))]).toEqual(['succeeded', true]);
        expect([existsSync(oldOrphan), existsSync(newOrphan), existsSync(notOurs)]).toEqual([false, true, true]);

        // A second sweep finds nothing more to do.
        expect(await runner.sweep()).toEqual({ interrupted: 0, expired: 0, orphanFiles: 0 });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test('0006 adds runner_id and heartbeat_at to a table made by 0005; old jobs read NULL', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(settingsMigrations.slice(0, 5))).toContain('settings/0005-log-exports');
      const sql = 'INSERT INTO log_exports (id, organisation_id, requested_by_api_key_id, format, query, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)';
      const values = [crypto.randomUUID(), 'org-x', 'key-x', 'csv', '{}', 'running', NOW];
      if (database.dialect === 'sqlite') database.db.$client.run(sql, values);
      else await database.db.$client.query(sql, values);
      expect(await database.migrate(settingsMigrations)).toEqual(['settings/0006-log-export-runs']);
      const [row] = await database.select(logExports, { fresh: true });
      expect([row?.status, row?.runner_id, row?.heartbeat_at]).toEqual(['running', null, null]);
      if (database.dialect === 'mysql') for (const statement of settingsMigrations[5]!.statements!.mysql) await database.db.$client.query(statement);
    });
  });
}
