// The cost columns: migration 0003 adds them to a table 0002 left (old rows read NULL; the MySQL statements can run
// again), and a fractional cost in cents is stored and read back as it was, beside the tokens of each kind.
import { describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { requestLogMigrations, requestLogs } from './table.ts';

for (const dialect of DIALECTS) {
  describe(`request-log cost columns [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('0003 adds the columns to a table made by 0001 + 0002; old rows read NULL; re-runnable', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(requestLogMigrations.slice(0, 2))).toEqual(['request-log/0001-request-logs', 'request-log/0002-hook-results']);
      const sql = 'INSERT INTO request_logs (id, trace_id, endpoint, method, path, status, latency_ms, retry_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
      const values = [crypto.randomUUID(), 'trace-old', 'chatComplete', 'POST', '/chat/completions', 200, 1, 0, Date.now()];
      if (database.dialect === 'sqlite') database.db.$client.run(sql, values);
      else await database.db.$client.query(sql, values);
      expect(await database.migrate(requestLogMigrations)).toEqual(['request-log/0003-cost', 'request-log/0004-retention', 'request-log/0005-attribution']);
      const old = await database.findOne(requestLogs, 'trace_id', 'trace-old');
      expect({ cost: old?.cost_cents, priced: old?.priced, cached: old?.cache_read_input_tokens }).toEqual({ cost: null, priced: null, cached: null });
      if (database.dialect === 'mysql') for (const statement of requestLogMigrations[2]!.statements!.mysql) await database.db.$client.query(statement);
    });

    test('a fractional cost in cents and the tokens of each kind round-trip', async () => {
      const { database } = await t.fresh();
      await database.migrate(requestLogMigrations);
      const cost = 0.000123456789;
      await database.insert(requestLogs, {
        trace_id: 'c',
        endpoint: 'chatComplete',
        method: 'POST',
        path: '/',
        status: 200,
        latency_ms: 1,
        created_at: 1,
        cost_cents: cost,
        priced: true,
        cache_read_input_tokens: 7,
        cache_write_input_tokens: 3,
        reasoning_tokens: 11,
      });
      const row = await database.findOne(requestLogs, 'trace_id', 'c');
      expect(row?.cost_cents).toBe(cost);
      expect(row?.priced).toBe(true);
      expect([row?.cache_read_input_tokens, row?.cache_write_input_tokens, row?.reasoning_tokens]).toEqual([7, 3, 11]);
    });
  });
}
