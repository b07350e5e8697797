// aggregate on both dialects with hand-made rows: nearest-rank percentiles with tied latencies and one-row groups,
// a NULL group, averages over the rows that have the figure, cost null when nothing was priced, sorting and pages.
import { describe, expect, test } from 'bun:test';
import { requestLogMigrations, requestLogs } from '@gateway/plugin-request-log';
import type { LogScope } from '@gateway/admin-settings';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type NewRow, sql } from '@gateway/sdk';
import { aggregate, countGroups, value } from './aggregate.ts';

const everything: LogScope = { where: () => sql`1 = 1`, none: false, filters: {}, metadataVisible: () => true };

const row = (model: string | null, latency: number, over: Partial<NewRow<typeof requestLogs>> = {}): NewRow<typeof requestLogs> => ({
  trace_id: 't', model, endpoint: 'chatComplete', method: 'POST', path: '/chat/completions', status: 200, latency_ms: latency, created_at: 1000, ...over,
});

for (const dialect of DIALECTS) {
  describe(`aggregate [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('percentiles by nearest rank, ties included; NULL keys form a group; sums, averages and sorting', async () => {
      const { database } = await t.fresh();
      await database.migrate(requestLogMigrations);
      // a: 20 latencies 1..20 with 5 tied at 7 (ranks 7-11) -> p50 = 10th = 7, p95 = 19th, p99 = 20th.
      const a = [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 12, 13, 14, 15, 16, 17, 18, 19, 20];
      await database.insert(requestLogs, [
        ...a.map((l, i) => row('a', l, { cost_cents: 0.5, total_tokens: i % 2 ? 10 : null, status: i < 5 ? 500 : 200, created_at: 1000 + i })),
        row('b', 300, { cost_cents: null }),
        row(null, 40),
        row(null, 40),
        row(null, 10),
      ]);
      const metrics = ['cost', 'avg_tokens', 'p50_latency', 'p95_latency', 'p99_latency', 'success_rate', 'error_count', 'first_seen', 'last_seen'] as const;
      const out = await aggregate(database, everything, { key: (c) => sql`${c.model}`, metrics: [...metrics], orderBy: { by: 'requests', desc: true } });
      const shown = out.map((r) => [r.k, value('requests', r), ...metrics.map((m) => value(m, r))]);
      expect(shown).toEqual([
        ['a', 20, 10, 10, 7, 19, 20, 0.75, 5, new Date(1000).toISOString(), new Date(1019).toISOString()],
        [null, 3, null, null, 40, 40, 40, 1, 0, new Date(1000).toISOString(), new Date(1000).toISOString()],
        ['b', 1, null, null, 300, 300, 300, 1, 0, new Date(1000).toISOString(), new Date(1000).toISOString()],
      ]);
      // Sorted by a percentile ascending, one per page.
      const page = await aggregate(database, everything, { key: (c) => sql`${c.model}`, metrics: ['p95_latency'], orderBy: { by: 'p95_latency', desc: false }, limit: 1, offset: 1 });
      expect(page.map((r) => [r.k, value('p95_latency', r)])).toEqual([[null, 40]]);
      expect(await countGroups(database, everything, (c) => sql`${c.model}`)).toBe(3);
      // Without a key: one row over everything; p50 of 24 = 12th smallest.
      const [all] = await aggregate(database, everything, { metrics: ['p50_latency', 'avg_latency'] });
      const sorted = [...a, 300, 40, 40, 10].sort((x, y) => x - y);
      expect([value('requests', all!), value('p50_latency', all!), value('avg_latency', all!)]).toEqual([24, sorted[11], sorted.reduce((s, x) => s + x, 0) / 24]);
    });
  });
}
