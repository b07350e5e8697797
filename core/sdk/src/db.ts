/**
 * Storage contract (ARCHITECTURE.md "State and storage"): each table is defined once with `defineTable`; the SQLite
 * and MySQL drizzle tables and the DDL of both dialects come from that one definition. Plugins receive a `Database`
 * (service `database`) whose helpers take such a definition, so plugin code does not branch on the dialect.
 */
import type { Database as BunSqliteClient } from 'bun:sqlite';
import type { Column, SQL } from 'drizzle-orm';
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
// mysql2's Pool is named through drizzle's re-export, so that a plugin type-checks without mysql2 installed.
import type { MySql2Client, MySql2Database } from 'drizzle-orm/mysql2';
import {
  bigint as myBigint,
  boolean as myBoolean,
  customType,
  double as myDouble,
  int as myInt,
  mediumtext,
  mysqlTable,
  varchar,
  type MySqlColumn,
  type MySqlColumnBuilderBase,
  type MySqlTable,
  type MySqlTableWithColumns,
} from 'drizzle-orm/mysql-core';
import {
  integer,
  real,
  sqliteTable,
  text,
  type SQLiteColumn,
  type SQLiteColumnBuilderBase,
  type SQLiteTable,
  type SQLiteTableWithColumns,
} from 'drizzle-orm/sqlite-core';
import type { Json } from './types.ts';

// One drizzle for every plugin: conditions are built with these and passed to the `Database` helpers.
export { and, asc, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, not, or, sql } from 'drizzle-orm';
export type { SQL } from 'drizzle-orm';

export type Dialect = 'sqlite' | 'mysql';

// ---- columns ----------------------------------------------------------------------------------------------------

export type ColumnKind = 'id' | 'ref' | 'string' | 'text' | 'int' | 'bigint' | 'double' | 'bool' | 'json' | 'timestamp';

export interface ColumnOptions {
  readonly length?: number;
  readonly nullable: boolean;
  readonly unique: boolean;
  readonly primary: boolean;
  /** Static default: also written into the DDL for scalar kinds. */
  readonly defaultValue?: string | number | boolean;
  /** Applied by drizzle on insert when the value is missing (SQLite inserts NULL otherwise, not the DDL default). */
  readonly defaultFn?: () => unknown;
}

/** A column of a table definition. The type parameters only carry the row type; they cost nothing at runtime. */
export class ColumnSpec<TData = unknown, TNullable extends boolean = boolean, THasDefault extends boolean = boolean> {
  declare readonly _: { data: TData; nullable: TNullable; hasDefault: THasDefault };

  constructor(
    readonly kind: ColumnKind,
    readonly options: ColumnOptions,
  ) {}

  nullable(): ColumnSpec<TData, true, THasDefault> {
    return new ColumnSpec(this.kind, { ...this.options, nullable: true });
  }

  unique(): ColumnSpec<TData, TNullable, THasDefault> {
    return new ColumnSpec(this.kind, { ...this.options, unique: true });
  }

  /** A value, or a function called per inserted row (`Date.now`, `() => []`). */
  default(value: TData | (() => TData)): ColumnSpec<TData, TNullable, true> {
    if (typeof value === 'function') return new ColumnSpec(this.kind, { ...this.options, defaultFn: value as () => TData });
    const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
    return new ColumnSpec(this.kind, {
      ...this.options,
      defaultValue: scalar && this.kind !== 'json' && this.kind !== 'text' ? value : undefined,
      defaultFn: () => (typeof value === 'object' && value !== null ? structuredClone(value) : value),
    });
  }
}

const base: ColumnOptions = { nullable: false, unique: false, primary: false };

export const col = {
  /** Primary key: a UUID from `crypto.randomUUID()` unless given. */
  id: () => new ColumnSpec<string, false, true>('id', { ...base, primary: true, defaultFn: () => crypto.randomUUID() }),
  /** Another row's id (no foreign key constraint: the same meaning on both dialects, no cross-plugin ordering). */
  ref: () => new ColumnSpec<string, false, false>('ref', base),
  string: <T extends string = string>(length = 255) => new ColumnSpec<T, false, false>('string', { ...base, length }),
  /** A string from a fixed set; stored as a plain string so adding a value needs no migration. */
  enum: <const T extends readonly [string, ...string[]]>(values: T, length = 32) =>
    new ColumnSpec<T[number], false, false>('string', { ...base, length: Math.max(length, ...values.map((v) => v.length)) }),
  /** Long text (bodies): TEXT in SQLite, MEDIUMTEXT (16 MiB) in MySQL. */
  text: () => new ColumnSpec<string, false, false>('text', base),
  int: () => new ColumnSpec<number, false, false>('int', base),
  /** A JS number: exact up to 2^53. */
  bigint: () => new ColumnSpec<number, false, false>('bigint', base),
  /** A floating-point number (REAL / DOUBLE): fractional amounts such as a cost in cents. */
  double: () => new ColumnSpec<number, false, false>('double', base),
  bool: () => new ColumnSpec<boolean, false, false>('bool', base),
  /** TEXT in SQLite, JSON in MySQL (LONGTEXT in MariaDB); read back as a value on both. */
  json: <T = Json>() => new ColumnSpec<T, false, false>('json', base),
  /** Epoch milliseconds (BIGINT / INTEGER): equal on both dialects, no time-zone conversions. */
  timestamp: () => new ColumnSpec<number, false, false>('timestamp', base),
};

export type ColumnMap = Record<string, ColumnSpec>;

export type DataOf<S> = S extends ColumnSpec<infer D, infer N, boolean> ? (N extends true ? D | null : D) : never;
type IsOptional<S> = S extends ColumnSpec<unknown, infer N, infer H> ? (N extends true ? true : H) : never;
type OptionalKeys<C> = { [K in keyof C]: IsOptional<C[K]> extends true ? K : never }[keyof C];

/** A row as read. */
export type RowOf<C extends ColumnMap> = { [K in keyof C]: DataOf<C[K]> };
/** A row to insert: nullable and defaulted columns may be left out. */
export type NewRowOf<C extends ColumnMap> = { [K in Exclude<keyof C, OptionalKeys<C>>]: DataOf<C[K]> } & {
  [K in OptionalKeys<C>]?: DataOf<C[K]>;
};

// ---- drizzle types of the generated tables ---------------------------------------------------------------------

type DrizzleColumnConfig<TTable extends string, K extends string, S> =
  S extends ColumnSpec<infer D, infer N, infer H>
    ? {
        name: K;
        tableName: TTable;
        dataType: 'custom';
        columnType: string;
        data: D;
        driverParam: unknown;
        notNull: N extends true ? false : true;
        hasDefault: H;
        isPrimaryKey: false;
        isAutoincrement: false;
        hasRuntimeDefault: H;
        enumValues: undefined;
        baseColumn: never;
        identity: undefined;
        generated: undefined;
      }
    : never;

/** The columns a `where` or `orderBy` callback receives (those of the dialect's table). */
export type Columns<C extends ColumnMap> = { [K in keyof C & string]: Column<DrizzleColumnConfig<string, K, C[K]>> };

export type SqliteTableOf<TName extends string, C extends ColumnMap> = SQLiteTableWithColumns<{
  name: TName;
  schema: undefined;
  columns: { [K in keyof C & string]: SQLiteColumn<DrizzleColumnConfig<TName, K, C[K]>> };
  dialect: 'sqlite';
}>;

export type MysqlTableOf<TName extends string, C extends ColumnMap> = MySqlTableWithColumns<{
  name: TName;
  schema: undefined;
  columns: { [K in keyof C & string]: MySqlColumn<DrizzleColumnConfig<TName, K, C[K]>> };
  dialect: 'mysql';
}>;

// ---- tables -----------------------------------------------------------------------------------------------------

export interface IndexSpec<K extends string = string> {
  columns: readonly K[];
  unique?: boolean;
  /** Defaults to `<table>_<columns>_idx` (`_uq` when unique). */
  name?: string;
}

/** What the helpers and the migrator need of a table, whatever its column types. */
export interface TableDefBase<C extends ColumnMap = ColumnMap> {
  readonly name: string;
  readonly columns: C;
  readonly indexes: readonly IndexSpec<keyof C & string>[];
  readonly sqlite: SQLiteTable;
  readonly mysql: MySqlTable;
  /** `CREATE TABLE IF NOT EXISTS` and index statements; safe to run again. */
  ddl(dialect: Dialect): string[];
}

export interface TableDef<TName extends string = string, C extends ColumnMap = ColumnMap> extends TableDefBase<C> {
  readonly name: TName;
  readonly sqlite: SqliteTableOf<TName, C>;
  readonly mysql: MysqlTableOf<TName, C>;
}

export type Row<T extends TableDefBase> = T extends TableDefBase<infer C> ? RowOf<C> : never;
export type NewRow<T extends TableDefBase> = T extends TableDefBase<infer C> ? NewRowOf<C> : never;

export function defineTable<const TName extends string, C extends ColumnMap>(
  name: TName,
  columns: C,
  options: { indexes?: readonly IndexSpec<keyof C & string>[] } = {},
): TableDef<TName, C> {
  const indexes = options.indexes ?? [];
  const specs = Object.entries(columns);
  const sqliteColumns: Record<string, SQLiteColumnBuilderBase> = {};
  const mysqlColumns: Record<string, MySqlColumnBuilderBase> = {};
  for (const [key, spec] of specs) {
    sqliteColumns[key] = sqliteBuilder(key, spec);
    mysqlColumns[key] = mysqlBuilder(key, spec);
  }
  return {
    name,
    columns,
    indexes,
    // The builders are typed loosely above; the table types are computed from the specs instead.
    sqlite: sqliteTable(name, sqliteColumns) as unknown as SqliteTableOf<TName, C>,
    mysql: mysqlTable(name, mysqlColumns) as unknown as MysqlTableOf<TName, C>,
    ddl: (dialect) => tableDdl(dialect, name, specs, indexes),
  };
}

type Builder = {
  notNull(): Builder;
  primaryKey(): Builder;
  unique(): Builder;
  $defaultFn(fn: () => unknown): Builder;
};

function finish<B>(builder: B, spec: ColumnSpec): B {
  let b = builder as unknown as Builder;
  const o = spec.options;
  if (o.primary) b = b.primaryKey();
  else if (!o.nullable) b = b.notNull();
  if (o.unique) b = b.unique();
  if (o.defaultFn) b = b.$defaultFn(o.defaultFn);
  return b as unknown as B;
}

function sqliteBuilder(name: string, spec: ColumnSpec): SQLiteColumnBuilderBase {
  switch (spec.kind) {
    case 'int':
    case 'bigint':
    case 'timestamp':
      return finish(integer(name, { mode: 'number' }), spec);
    case 'double':
      return finish(real(name), spec);
    case 'bool':
      return finish(integer(name, { mode: 'boolean' }), spec);
    case 'json':
      return finish(text(name, { mode: 'json' }), spec);
    default:
      return finish(text(name), spec);
  }
}

// mysql2 returns JSON as a string on MariaDB (and on MySQL with `jsonStrings`); drizzle's json() would not parse it.
const mysqlJson = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'json',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => (typeof value === 'string' ? JSON.parse(value) : value),
});

function mysqlBuilder(name: string, spec: ColumnSpec): MySqlColumnBuilderBase {
  switch (spec.kind) {
    case 'id':
    case 'ref':
      return finish(varchar(name, { length: 36 }), spec);
    case 'string':
      return finish(varchar(name, { length: spec.options.length ?? 255 }), spec);
    case 'text':
      return finish(mediumtext(name), spec);
    case 'int':
      return finish(myInt(name), spec);
    case 'bigint':
    case 'timestamp':
      return finish(myBigint(name, { mode: 'number' }), spec);
    case 'double':
      return finish(myDouble(name), spec);
    case 'bool':
      return finish(myBoolean(name), spec);
    case 'json':
      return finish(mysqlJson(name), spec);
  }
}

// ---- DDL --------------------------------------------------------------------------------------------------------

function columnType(dialect: Dialect, spec: ColumnSpec): string {
  if (dialect === 'sqlite') {
    if (spec.kind === 'double') return 'REAL';
    return spec.kind === 'int' || spec.kind === 'bigint' || spec.kind === 'timestamp' || spec.kind === 'bool'
      ? 'INTEGER'
      : 'TEXT';
  }
  switch (spec.kind) {
    case 'id':
    case 'ref':
      return 'VARCHAR(36)';
    case 'string':
      return `VARCHAR(${spec.options.length ?? 255})`;
    case 'text':
      return 'MEDIUMTEXT';
    case 'int':
      return 'INT';
    case 'bigint':
    case 'timestamp':
      return 'BIGINT';
    case 'double':
      return 'DOUBLE';
    case 'bool':
      return 'BOOLEAN';
    case 'json':
      return 'JSON';
  }
}

function literal(dialect: Dialect, value: string | number | boolean): string {
  if (typeof value === 'boolean') return dialect === 'sqlite' ? (value ? '1' : '0') : value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  return `'${value.replaceAll("'", "''")}'`;
}

const quote = (dialect: Dialect, id: string) => (dialect === 'sqlite' ? `"${id}"` : `\`${id}\``);

/** MySQL caps identifiers at 64 characters; a long name keeps its start and gains a short hash. */
function indexName(table: string, index: IndexSpec): string {
  const name = index.name ?? `${table}_${index.columns.join('_')}_${index.unique ? 'uq' : 'idx'}`;
  if (name.length <= 64) return name;
  const hash = new Bun.CryptoHasher('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, 55)}_${hash}`;
}

function tableDdl(dialect: Dialect, table: string, specs: [string, ColumnSpec][], indexes: readonly IndexSpec[]): string[] {
  const q = (id: string) => quote(dialect, id);
  const lines = specs.map(([name, spec]) => {
    const o = spec.options;
    let line = `${q(name)} ${columnType(dialect, spec)}`;
    if (o.primary) line += ' PRIMARY KEY';
    line += o.nullable ? ' NULL' : ' NOT NULL';
    if (o.unique) line += ' UNIQUE';
    if (o.defaultValue !== undefined) line += ` DEFAULT ${literal(dialect, o.defaultValue)}`;
    // SQLite TEXT has no length: the check makes an over-long string fail as it does in (strict) MySQL.
    const length = spec.kind === 'string' ? (o.length ?? 255) : spec.kind === 'id' || spec.kind === 'ref' ? 36 : undefined;
    if (dialect === 'sqlite' && length !== undefined) line += ` CHECK (length(${q(name)}) <= ${length})`;
    return line;
  });
  const indexSql = (index: IndexSpec) => index.columns.map(q).join(', ');
  if (dialect === 'mysql') {
    // MySQL 8 has no CREATE INDEX IF NOT EXISTS: indexes live inside the (idempotent) CREATE TABLE.
    for (const index of indexes) lines.push(`${index.unique ? 'UNIQUE ' : ''}KEY ${q(indexName(table, index))} (${indexSql(index)})`);
    // Binary collation: string comparison and uniqueness mean the same as in SQLite (case-sensitive).
    return [
      `CREATE TABLE IF NOT EXISTS ${q(table)} (\n  ${lines.join(',\n  ')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ];
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${q(table)} (\n  ${lines.join(',\n  ')}\n)`,
    ...indexes.map(
      (index) =>
        `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${q(indexName(table, index))} ON ${q(table)} (${indexSql(index)})`,
    ),
  ];
}

// ---- migrations and the database service --------------------------------------------------------------------------

/** Applied once per database, recorded by id in `_migrations`. Prefix ids with the plugin (`request-log/0001`). */
export interface Migration {
  id: string;
  /** Tables to create (their `ddl`). */
  tables?: readonly TableDefBase[];
  /** Further statements, written for each dialect. */
  statements?: { sqlite: readonly string[]; mysql: readonly string[] };
}

export type Where<C extends ColumnMap> = (columns: Columns<C>) => SQL | undefined;

export interface ReadOptions {
  /**
   * Read from the writer even when a reader replica is configured (read-your-writes). While the writer is down in
   * HADR mode such a read goes to the reader instead.
   */
  fresh?: boolean;
}

export interface SelectOptions<C extends ColumnMap> extends ReadOptions {
  where?: Where<C>;
  orderBy?: (columns: Columns<C>) => SQL | Column | readonly (SQL | Column)[];
  limit?: number;
  offset?: number;
}

export interface InsertOptions {
  /** Skip rows that hit a unique key (SQLite `ON CONFLICT DO NOTHING`, MySQL `INSERT IGNORE`). */
  ignoreDuplicates?: boolean;
}

/** Helpers shared by both dialects. Reads go to the reader replica when there is one. */
export interface DatabaseHelpers {
  readonly dialect: Dialect;
  /** Multi-row insert (split only when the dialect's parameter limit requires it); resolves to rows inserted. */
  insert<C extends ColumnMap>(
    table: TableDefBase<C>,
    rows: NewRowOf<C> | readonly NewRowOf<C>[],
    options?: InsertOptions,
  ): Promise<number>;
  select<C extends ColumnMap>(table: TableDefBase<C>, options?: SelectOptions<C>): Promise<RowOf<C>[]>;
  findOne<C extends ColumnMap, K extends keyof C & string>(
    table: TableDefBase<C>,
    column: K,
    value: Exclude<DataOf<C[K]>, null>,
    options?: ReadOptions,
  ): Promise<RowOf<C> | undefined>;
  count<C extends ColumnMap>(table: TableDefBase<C>, where?: Where<C>, options?: ReadOptions): Promise<number>;
  /** Resolves to the rows matched. `where` is required so that no call updates a whole table by accident. */
  update<C extends ColumnMap>(table: TableDefBase<C>, values: Partial<NewRowOf<C>>, where: Where<C>): Promise<number>;
  delete<C extends ColumnMap>(table: TableDefBase<C>, where: Where<C>): Promise<number>;
  /**
   * Runs `fn` in a transaction: every write made through `tx` lands, or none does (the promise rejects with fn's
   * error). Reads through `tx` see its own writes. On SQLite transactions are serialised in the process.
   */
  transaction<T>(fn: (tx: TransactionHelpers) => Promise<T>): Promise<T>;
  /** Applies the migrations not yet recorded; safe from several processes at once. Resolves to the ids applied. */
  migrate(migrations: readonly Migration[]): Promise<string[]>;
  /**
   * `degraded` while the writer is down in HADR mode (MYSQL_WRITER_HADR_MODE=ON): reads go on from the reader,
   * writes fail at once with `database_writer_unavailable` (503) until a background probe reconnects. Always `ok`
   * otherwise.
   */
  health(): DatabaseHealth;
  close(): Promise<void>;
}

export type DatabaseHealth = { status: 'ok' } | { status: 'degraded'; reason: string };

/** The helpers inside a transaction: reads and writes, all on the transaction's connection. */
export type TransactionHelpers = Omit<DatabaseHelpers, 'transaction' | 'migrate' | 'close' | 'health'>;

export interface SqliteDatabase extends DatabaseHelpers {
  readonly dialect: 'sqlite';
  readonly db: BunSQLiteDatabase & { $client: BunSqliteClient };
  readonly reader: BunSQLiteDatabase & { $client: BunSqliteClient };
  table<T extends TableDefBase>(def: T): T['sqlite'];
}

/** mysql2's promise Pool (the client behind the MySQL database). */
type MysqlPool = Extract<MySql2Client, { getConnection(): unknown }>;

export interface MysqlDatabase extends DatabaseHelpers {
  readonly dialect: 'mysql';
  readonly db: MySql2Database & { $client: MysqlPool };
  /** The reader replica (DB_READER_*), or `db`. */
  readonly reader: MySql2Database & { $client: MysqlPool };
  table<T extends TableDefBase>(def: T): T['mysql'];
}

/** The `database` service. Narrow on `dialect` to use drizzle directly for what the helpers do not cover. */
export type Database = SqliteDatabase | MysqlDatabase;
