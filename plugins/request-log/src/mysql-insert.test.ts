/**
 * The writer thread's MySQL insert (prepared statements of fixed sizes, one transaction): rows read back as the
 * generic insert stores them, counts that need several statement sizes, duplicates ignored on replay, and a failing
 * statement leaves none of the call's rows.
 */
import { describe, expect, test } from 'bun:test';
import { asc, type MysqlDatabase } from '@gateway/sdk';
import { useTestDatabase } from '@gateway/db/testing';
import { mysqlLogInsert, statementSizes } from './mysql-insert.ts';
import { toRow, type RequestLogRow } from './row.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testEntry, usageFrom } from './test-request.ts';

function rowOf(i: number, id = Bun.randomUUIDv7()): RequestLogRow {
  const row = toRow(
    testEntry(i, {
      organisationId: i % 2 ? 'org-a' : null,
      requestBody: new TextEncoder().encode(JSON.stringify({ n: i, text: 'é€😀 "quoted" \\ back' })),
      responseBody: i % 3 ? `answer ${i}` : null,
      usageFrom: usageFrom(i, 2, i + 2),
      costCents: i / 7,
      priced: i % 2 === 0,
      metadata: { team: `t${i}` },
      attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: i }],
    }),
    65_536,
  );
  row.id = id;
  return row;
}

test('statementSizes: largest first, summing to the count', () => {
  expect(statementSizes(0)).toEqual([]);
  expect(statementSizes(1)).toEqual([1]);
  expect(statementSizes(1000)).toEqual([256, 256, 256, 128, 64, 32, 8]);
  expect(statementSizes(259)).toEqual([256, 2, 1]);
});

describe('mysqlLogInsert [mysql]', () => {
  const t = useTestDatabase('mysql');

  test('rows read back as the generic insert stores them, across statement sizes', async () => {
    const { database } = await t.fresh();
    await database.migrate(requestLogMigrations);
    const insert = mysqlLogInsert(database as MysqlDatabase);
    const rows = Array.from({ length: 259 }, (_, i) => rowOf(i));
    await insert(rows);
    const reference = rowOf(999);
    await database.insert(requestLogs, [reference]);
    const stored = await database.select(requestLogs, { orderBy: (c) => asc(c.latency_ms), fresh: true });
    expect(stored.length).toBe(260);
    // The row written by the generic insert and one written here, compared column by column apart from the values.
    const mine = stored[7]!;
    expect(mine).toEqual({ ...rowOf(7, mine.id) } as typeof mine);
    expect(stored[259]).toEqual({ ...reference } as (typeof stored)[number]);
    expect(mine.metadata).toEqual({ team: 't7' });
    expect(mine.priced).toBe(false);
    expect(mine.cost_cents).toBeCloseTo(1);
  });

  test('ignoreDuplicates skips rows stored already; without it the whole call fails and stores nothing', async () => {
    const { database } = await t.fresh();
    await database.migrate(requestLogMigrations);
    const insert = mysqlLogInsert(database as MysqlDatabase);
    const first = Array.from({ length: 3 }, (_, i) => rowOf(i));
    await insert(first);
    const more = [...first, ...Array.from({ length: 300 }, (_, i) => rowOf(100 + i))];
    // A duplicate in the last statement (of size 1): the first statements' rows must be rolled back too.
    const failing = [...more.slice(3), first[0]!];
    await expect(insert(failing)).rejects.toThrow(/Duplicate/);
    expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(3);
    await insert(more, true);
    expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(303);
  });
});
