// The hook_results column: migration 0002 adds it to a table 0001 made (rows already there keep NULL; the MySQL
// statements can run twice), the finally stage stores `req.locals.hookResults` (feedback included), waits for hooks
// still running (`req.locals.hookResultsSettled`) before it queues the row, and shutdown writes rows still waiting.

import { describe, expect, test } from 'bun:test';
import type { Database, FinallyStage } from '@gateway/sdk';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testPluginApi } from '@gateway/sdk/testing';
import plugin from './index.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testOutcome, testRequest } from './test-request.ts';
import { RequestLogServices } from '@gateway/plugin-request-log';

const hookResult = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  verdict: false,
  deny: false,
  async: false,
  checks: [{ id: 'test.fail', verdict: false, data: { why: 'x' }, error: null, execution_time: 0.2 }],
  feedback: { value: -1, weight: 2, metadata: { team: 'a' } },
  execution_time: 0.3,
  ...extra,
});

async function rawInsert(database: Database, traceId: string): Promise<void> {
  const sql = 'INSERT INTO request_logs (id, trace_id, endpoint, method, path, status, latency_ms, retry_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
  const values = [crypto.randomUUID(), traceId, 'chatComplete', 'POST', '/chat/completions', 200, 1, 0, Date.now()];
  if (database.dialect === 'sqlite') database.db.$client.run(sql, values);
  else await database.db.$client.query(sql, values);
}

for (const dialect of DIALECTS) {
  describe(`request-log hook_results [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('0002 adds hook_results to a table made by 0001; old rows read NULL', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(requestLogMigrations.slice(0, 1))).toEqual(['request-log/0001-request-logs']);
      await rawInsert(database, 'trace-old');
      expect(await database.migrate(requestLogMigrations)).toEqual(['request-log/0002-hook-results', 'request-log/0003-cost', 'request-log/0004-retention', 'request-log/0005-attribution']);
      expect((await database.findOne(requestLogs, 'trace_id', 'trace-old'))?.hook_results).toBeNull();
      if (database.dialect === 'mysql') {
        // Re-runnable: a crash after the ALTER and before the record must not make the next start fail.
        for (const statement of requestLogMigrations[1]!.statements!.mysql) await database.db.$client.query(statement);
      }
    });

    test('a fresh database gets the column from 0001 + 0002 (and 0003)', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(requestLogMigrations)).toEqual(['request-log/0001-request-logs', 'request-log/0002-hook-results', 'request-log/0003-cost', 'request-log/0004-retention', 'request-log/0005-attribution']);
      await database.insert(requestLogs, { trace_id: 't', endpoint: 'e', method: 'POST', path: '/', status: 200, latency_ms: 1, created_at: 1, hook_results: [1] });
      expect((await database.findOne(requestLogs, 'trace_id', 't'))?.hook_results).toEqual([1]);
    });

    test('hook results (feedback included) are stored; a row waits for hooks still running', async () => {
      const { database } = await t.fresh();
      const harness = testPluginApi({ services: { database } });
      await plugin.setup(harness.api);
      const stage = harness.stages.find((s) => s.phase === 'finally') as FinallyStage;

      const now = testRequest({ traceId: 'trace-hooks-now', locals: { hookResults: [hookResult('in')] } });
      expect(stage.run(now, testOutcome())).toBeUndefined();

      // An async hook still running: its result joins the array later, and the promise says when.
      const results: unknown[] = [hookResult('sync', { verdict: true, feedback: null })];
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      const later = testRequest({ traceId: 'trace-hooks-later', locals: { hookResults: results, hookResultsSettled: settled } });
      expect(stage.run(later, testOutcome())).toBeUndefined();
      const queue = harness.api.service(RequestLogServices.queue);
      await queue.flush();
      expect(await database.findOne(requestLogs, 'trace_id', 'trace-hooks-later')).toBeUndefined(); // not yet
      results.push(hookResult('async', { async: true }));
      settle();

      // One whose hooks never finish: written at shutdown with what is known, after the 5 s grace (one dialect is
      // enough to pay for that wait: the logic does not depend on it).
      const stuck = testRequest({ traceId: 'trace-hooks-stuck', locals: { hookResults: [hookResult('stuck')], hookResultsSettled: new Promise(() => {}) } });
      if (dialect === 'sqlite') stage.run(stuck, testOutcome());
      const closing = performance.now();
      await harness.close();
      expect(performance.now() - closing).toBeLessThan(7_000);

      expect((await database.findOne(requestLogs, 'trace_id', 'trace-hooks-now'))?.hook_results).toEqual([hookResult('in')]);
      expect((await database.findOne(requestLogs, 'trace_id', 'trace-hooks-later'))?.hook_results).toEqual([
        hookResult('sync', { verdict: true, feedback: null }),
        hookResult('async', { async: true }),
      ]);
      if (dialect === 'sqlite') expect((await database.findOne(requestLogs, 'trace_id', 'trace-hooks-stuck'))?.hook_results).toEqual([hookResult('stuck')]);
    }, 15_000);
  });
}
