/**
 * The writer thread's insert into MySQL/MariaDB (docs/performance.md, "Write throughput"). The `database` service's
 * generic insert sends one text `INSERT … VALUES (…), (…)` per batch: the driver escapes every value into the
 * statement in JavaScript and the server parses it all again. Here rows go as server-side prepared statements
 * (binary protocol: values travel as they are, nothing escaped or parsed), measured at about a quarter less CPU a row
 * on both sides. A statement holds a fixed number of rows, a power of two up to 256, so that each connection keeps
 * at most nine statement texts per mode (the driver caches the prepared statements by text); the statements of one
 * call run in one transaction, so that the call stores all its rows or none (as one statement did) with one commit.
 */
import type { ColumnSpec, MysqlDatabase } from '@gateway/sdk';
import type { RequestLogRow } from './row.ts';
import { requestLogs } from './table.ts';

type Loose = Record<string, unknown>;
/** What the log's columns hold on the wire: text, numbers (booleans as 0/1, JSON as text), or null. */
type Param = string | number | null;

/** Rows per statement, largest first. 256 rows × 44 columns stays far below the protocol's 65,535 parameters. */
const SIZES = [256, 128, 64, 32, 16, 8, 4, 2, 1] as const;

const NAMES = Object.keys(requestLogs.columns);
const SPECS = NAMES.map((name) => (requestLogs.columns as Record<string, ColumnSpec>)[name]!);

/** A value as the column stores it: the same rules as the `database` service's insert (defaults, JSON, booleans). */
function driverValue(spec: ColumnSpec, value: unknown): Param {
  let v = value;
  if (v === undefined) v = spec.options.defaultFn ? spec.options.defaultFn() : (spec.options.defaultValue ?? null);
  if (v === null || v === undefined) return null;
  if (spec.kind === 'json') return JSON.stringify(v);
  if (spec.kind === 'bool') return v ? 1 : 0;
  return v as Param;
}

const statementTexts = (ignore: boolean): Map<number, string> => {
  const head = `INSERT ${ignore ? 'IGNORE ' : ''}INTO \`${requestLogs.name}\` (${NAMES.map((n) => `\`${n}\``).join(', ')}) VALUES `;
  const tuple = `(${NAMES.map(() => '?').join(', ')})`;
  return new Map(SIZES.map((size) => [size, head + Array.from({ length: size }, () => tuple).join(', ')]));
};
const TEXTS = { insert: statementTexts(false), ignore: statementTexts(true) };

/** How many rows each statement takes, largest first (the binary decomposition of `count`). */
export function statementSizes(count: number): number[] {
  const out: number[] = [];
  let left = count;
  for (const size of SIZES) {
    while (left >= size) {
      out.push(size);
      left -= size;
    }
  }
  return out;
}

/** `insert(rows, ignoreDuplicates)` for the writer, on the thread's own pool. */
export function mysqlLogInsert(database: MysqlDatabase): (rows: readonly RequestLogRow[], ignoreDuplicates?: boolean) => Promise<void> {
  const pool = database.db.$client;
  return async (rows, ignoreDuplicates = false) => {
    if (rows.length === 0) return;
    const texts = ignoreDuplicates ? TEXTS.ignore : TEXTS.insert;
    const sizes = statementSizes(rows.length);
    const connection = await pool.getConnection();
    let healthy = false;
    try {
      // One statement commits by itself; several share a transaction (all or none, one commit).
      if (sizes.length > 1) await connection.beginTransaction();
      let at = 0;
      for (const size of sizes) {
        const params: Param[] = new Array<Param>(size * NAMES.length);
        let p = 0;
        for (let r = at; r < at + size; r++) {
          const row = rows[r] as unknown as Loose;
          for (let c = 0; c < NAMES.length; c++) params[p++] = driverValue(SPECS[c]!, row[NAMES[c]!]);
        }
        await connection.execute(texts.get(size)!, params);
        at += size;
      }
      if (sizes.length > 1) await connection.commit();
      healthy = true;
    } finally {
      // After an error the connection's state is unknown (a transaction left open, a broken socket): not reused.
      if (healthy) connection.release();
      else connection.destroy();
    }
  };
}
