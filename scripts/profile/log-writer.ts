/**
 * The request-log writer's CPU per row, by step, on this thread (so that `bun --cpu-prof` sees it: the gateway runs
 * the same code in a Worker, which the profiler does not sample). Batches of 1,000 realistic entries go through
 * the steps the writer thread does: the wire encoding (main thread in the gateway), its decoding, `toRow`, the
 * SQLite insert, into a fresh file with the gateway's indexes (the request log's and analytics').
 *
 *   bun --cpu-prof --cpu-prof-dir=/tmp/writer-prof scripts/profile/log-writer.ts    # then scripts/profile/stages.ts
 *   N=50000 bun scripts/profile/log-writer.ts                                        # µs a row by step, no profiler
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@gateway/db';
import { analyticsMigrations } from '../../admin/analytics/src/indexes.ts';
import { withRowId } from '../../plugins/request-log/src/queued.ts';
import { toRow } from '../../plugins/request-log/src/row.ts';
import { requestLogMigrations, requestLogs } from '../../plugins/request-log/src/table.ts';
import { fromWirePart, toWirePart } from '../../plugins/request-log/src/wire.ts';
import { realisticEntry } from '../log-throughput.ts';

const N = Number(process.env.N ?? 50_000);
const BATCH = 1_000;
const MAX_BODY = 65_536;
const dir = mkdtempSync(join(tmpdir(), 'gw-writer-prof-'));
const database = await createDatabase(`sqlite:${join(dir, 'gateway.db')}`);
await database.migrate(process.env.ANALYTICS_INDEXES === '0' ? requestLogMigrations : [...requestLogMigrations, ...analyticsMigrations]);

const spent = { encode: 0, decode: 0, toRow: 0, insert: 0 };
for (let start = 0; start < N; start += BATCH) {
  const batch = Array.from({ length: BATCH }, (_, i) => withRowId(realisticEntry(start + i)));
  let t = performance.now();
  const part = toWirePart(batch, 0, batch.length, MAX_BODY, () => {});
  spent.encode += performance.now() - t;
  t = performance.now();
  const { entries } = fromWirePart(part);
  spent.decode += performance.now() - t;
  t = performance.now();
  const rows = entries.map((e) => toRow(e, MAX_BODY));
  spent.toRow += performance.now() - t;
  t = performance.now();
  for (let i = 0; i < rows.length; i += 250) await database.insert(requestLogs, rows.slice(i, i + 250));
  spent.insert += performance.now() - t;
}
const perRow = (ms: number) => ((ms * 1000) / N).toFixed(2);
console.log(`${N} rows: µs a row — encode ${perRow(spent.encode)}, decode ${perRow(spent.decode)}, toRow ${perRow(spent.toRow)}, insert ${perRow(spent.insert)}`);
await database.close();
rmSync(dir, { recursive: true, force: true });
