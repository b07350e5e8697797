/**
 * The dialect-free helpers of the `database` service. Each helper builds the same drizzle query for the dialect's
 * table; the casts here are the one place where the definition's row types meet drizzle's loose table types.
 */
import { count as countAll, eq, type SQL } from 'drizzle-orm';
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import type { MySqlTable } from 'drizzle-orm/mysql-core';
import type { MySql2Database } from 'drizzle-orm/mysql2';
import type { Pool } from 'mysql2/promise';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Database as SqliteClient, SQLQueryBindings, Statement } from 'bun:sqlite';
import type {
  ColumnMap,
  ColumnSpec,
  Columns,
  DatabaseHelpers,
  InsertOptions,
  NewRowOf,
  ReadOptions,
  RowOf,
  SelectOptions,
  TableDefBase,
  Where,
} from '@gateway/sdk';

export type Drizzles =
  | { dialect: 'sqlite'; db: BunSQLiteDatabase & { $client: SqliteClient }; reader: BunSQLiteDatabase; writerDown?: undefined }
  | {
      dialect: 'mysql';
      db: MySql2Database & { $client: Pool };
      reader: MySql2Database;
      /** HADR mode: true while the writer is down, when `fresh` reads go to the reader too. */
      writerDown?: () => boolean;
    };

// Bound parameters per statement: SQLite allows 32766, MySQL 65535; stay below both.
const MAX_PARAMS = { sqlite: 30_000, mysql: 60_000 } as const;

type Loose = Record<string, unknown>;
export type Helpers = Omit<DatabaseHelpers, 'migrate' | 'close' | 'transaction' | 'health'>;

function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** MySQL's result header or bun:sqlite's `Changes`. */
function affected(result: unknown): number {
  const header = Array.isArray(result) ? result[0] : result;
  if (header && typeof header === 'object') {
    const h = header as { affectedRows?: unknown; changes?: unknown };
    if (typeof h.affectedRows === 'number') return h.affectedRows;
    if (typeof h.changes === 'number') return h.changes;
  }
  return 0;
}

const statements = new WeakMap<SqliteClient, Map<string, Statement>>();

/** One cached prepared INSERT per table and conflict mode. */
function sqliteInsert(client: SqliteClient, table: string, names: string[], ignore: boolean): Statement {
  let byKey = statements.get(client);
  if (!byKey) statements.set(client, (byKey = new Map()));
  const key = `${ignore ? 'i' : 'p'}:${table}:${names.join(',')}`;
  let statement = byKey.get(key);
  if (!statement) {
    const cols = names.map((n) => `"${n}"`).join(', ');
    statement = client.prepare(`INSERT ${ignore ? 'OR IGNORE ' : ''}INTO "${table}" (${cols}) VALUES (${names.map(() => '?').join(', ')})`);
    byKey.set(key, statement);
  }
  return statement;
}

/** A row value as the driver stores it, defaults applied the way the drizzle table would apply them. */
function driverValue(spec: ColumnSpec, value: unknown): unknown {
  let v = value;
  if (v === undefined) v = spec.options.defaultFn ? spec.options.defaultFn() : (spec.options.defaultValue ?? null);
  if (v === null || v === undefined) return null;
  if (spec.kind === 'json') return JSON.stringify(v);
  if (spec.kind === 'bool') return v ? 1 : 0;
  return v;
}

export function createHelpers(d: Drizzles): Helpers {
  const columnsOf = <C extends ColumnMap>(def: TableDefBase<C>) =>
    (d.dialect === 'sqlite' ? def.sqlite : def.mysql) as unknown as Columns<C>;
  const whereOf = <C extends ColumnMap>(def: TableDefBase<C>, where: Where<C> | undefined): SQL | undefined =>
    where?.(columnsOf(def));
  // A condition that came out empty (`and()` of nothing) must not turn into a whole-table update or delete.
  // `fresh` asks for the writer; while the writer is down (HADR mode) the reader is what there is.
  const fromWriter = (options: ReadOptions) => options.fresh === true && d.writerDown?.() !== true;
  const requiredWhere = <C extends ColumnMap>(def: TableDefBase<C>, where: Where<C>): SQL => {
    const condition = whereOf(def, where);
    if (!condition) throw new Error(`refusing to change every row of ${def.name}: the condition is empty`);
    return condition;
  };

  async function insert<C extends ColumnMap>(
    def: TableDefBase<C>,
    rows: NewRowOf<C> | readonly NewRowOf<C>[],
    options: InsertOptions = {},
  ): Promise<number> {
    const list = (Array.isArray(rows) ? rows : [rows]) as Loose[];
    if (list.length === 0) return 0;
    // Statements are written here rather than by drizzle's builder: building a batch of log rows through the
    // builder cost ~50 µs a row, the prepared statement ~2 µs.
    const names = Object.keys(def.columns);
    const specs = names.map((name) => def.columns[name] as ColumnSpec);
    const values = (row: Loose) => specs.map((spec, i) => driverValue(spec, row[names[i] as string]));
    if (d.dialect === 'sqlite') {
      const statement = sqliteInsert(d.db.$client, def.name, names, options.ignoreDuplicates === true);
      let inserted = 0;
      d.db.$client.transaction(() => {
        for (const row of list) inserted += statement.run(...(values(row) as SQLQueryBindings[])).changes;
      })();
      return inserted;
    }
    const perStatement = Math.max(1, Math.floor(MAX_PARAMS.mysql / names.length));
    const head = `INSERT ${options.ignoreDuplicates ? 'IGNORE ' : ''}INTO \`${def.name}\` (${names.map((n) => `\`${n}\``).join(', ')}) VALUES `;
    const tuple = `(${names.map(() => '?').join(', ')})`;
    let inserted = 0;
    for (const chunk of chunks(list, perStatement)) {
      const params = chunk.flatMap(values);
      const [result] = await d.db.$client.query(head + chunk.map(() => tuple).join(', '), params);
      inserted += affected(result);
    }
    return inserted;
  }

  async function select<C extends ColumnMap>(def: TableDefBase<C>, options: SelectOptions<C> = {}): Promise<RowOf<C>[]> {
    const where = whereOf(def, options.where);
    const order = options.orderBy?.(columnsOf(def));
    const orderBy = order === undefined ? [] : Array.isArray(order) ? order : [order];
    if (d.dialect === 'sqlite') {
      let q = (fromWriter(options) ? d.db : d.reader).select().from(def.sqlite as SQLiteTable).where(where).$dynamic();
      if (orderBy.length) q = q.orderBy(...orderBy);
      if (options.limit !== undefined) q = q.limit(options.limit);
      if (options.offset !== undefined) q = q.offset(options.offset);
      return (await q) as RowOf<C>[];
    }
    let q = (fromWriter(options) ? d.db : d.reader).select().from(def.mysql as MySqlTable).where(where).$dynamic();
    if (orderBy.length) q = q.orderBy(...orderBy);
    if (options.limit !== undefined) q = q.limit(options.limit);
    if (options.offset !== undefined) q = q.offset(options.offset);
    return (await q) as RowOf<C>[];
  }

  async function findOne<C extends ColumnMap, K extends keyof C & string>(
    def: TableDefBase<C>,
    column: K,
    value: unknown,
    options: ReadOptions = {},
  ): Promise<RowOf<C> | undefined> {
    const rows = await select(def, { ...options, where: (c) => eq(c[column], value), limit: 1 });
    return rows[0];
  }

  async function count<C extends ColumnMap>(def: TableDefBase<C>, where?: Where<C>, options: ReadOptions = {}): Promise<number> {
    const condition = whereOf(def, where);
    const rows =
      d.dialect === 'sqlite'
        ? await (fromWriter(options) ? d.db : d.reader).select({ n: countAll() }).from(def.sqlite).where(condition)
        : await (fromWriter(options) ? d.db : d.reader).select({ n: countAll() }).from(def.mysql).where(condition);
    return rows[0]?.n ?? 0;
  }

  async function update<C extends ColumnMap>(def: TableDefBase<C>, values: Partial<NewRowOf<C>>, where: Where<C>): Promise<number> {
    const set = values as Loose;
    if (Object.keys(set).length === 0) return 0;
    const condition = requiredWhere(def, where);
    if (d.dialect === 'sqlite') return affected(d.db.update(def.sqlite).set(set).where(condition).run());
    return affected(await d.db.update(def.mysql).set(set).where(condition));
  }

  async function remove<C extends ColumnMap>(def: TableDefBase<C>, where: Where<C>): Promise<number> {
    const condition = requiredWhere(def, where);
    if (d.dialect === 'sqlite') return affected(d.db.delete(def.sqlite).where(condition).run());
    return affected(await d.db.delete(def.mysql).where(condition));
  }

  return { dialect: d.dialect, insert, select, findOne, count, update, delete: remove };
}
