/**
 * Writing one batch of entries: turn them into rows, split the rows into statements of bounded size, insert each
 * (retried once, then the rest of the batch is dropped). The same code runs in the writer thread (writer.worker.ts)
 * and, as the fallback, on the main thread, where it writes small transactions and yields between them. It reports
 * what happened as events, which the queue turns into its stats and log lines.
 */
import type { DatabaseHelpers } from '@gateway/sdk';
import type { BodyCompression } from './body-compression.ts';
import { decodeRecords } from './journal-record.ts';
import type { QueuedEntry } from './queued.ts';
import { toRow, type RequestLogRow } from './row.ts';
import { requestLogs } from './table.ts';

/** An error as it may cross threads and reach the log: the driver's reason only. */
export interface ErrorInfo {
  message: string;
  code?: string | number;
}

/** The driver's reason only: drizzle's own message repeats the statement and its parameters (the bodies). */
export function reason(err: unknown): ErrorInfo {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? { message: message.slice(0, 300), code } : { message: message.slice(0, 300) };
}

export type WriterEvent =
  /** Rows stored; `next`: index (in the batch) of the first entry not yet stored; `statement`: a statement ended. */
  | { kind: 'written'; rows: number; next: number; statement: boolean }
  /** An insert failed; it is tried once more after the retry delay. */
  | { kind: 'retry'; error: ErrorInfo; entries: number }
  /**
   * An insert failed twice: the entries from position `from` of the batch on (less those reported bad) are not
   * stored; `entries` of them. The queue journals them (or, without a journal, counts them as dropped).
   */
  | { kind: 'unwritten'; error: ErrorInfo; from: number; entries: number }
  /** An entry that could not be turned into a row (index in the batch). */
  | { kind: 'bad-entry'; error: ErrorInfo; traceId: string; index: number }
  /** Entries lost to a writer failure (a bug, or a writer thread that died twice). */
  | { kind: 'lost'; error: ErrorInfo; dropped: number };

export interface WriteSettings {
  /** Cap of each stored body, in UTF-8 bytes. */
  maxBodyBytes: number;
  /** Bytes of body text per INSERT at most. */
  maxStatementBytes: number;
  /** Pause before the one retry of a failed insert (ms). */
  retryDelayMs: number;
  /** Rows per transaction: a statement is written in parts of at most this many rows. */
  rowsPerWrite: number;
  /** How bodies are stored (LOG_BODY_COMPRESSION); none when absent. */
  bodyCompression?: BodyCompression;
}

export interface WriteOptions extends WriteSettings {
  /** Awaited between parts (and every `rowsPerWrite` entries turned into rows) to let the thread serve other work. */
  pause?: () => Promise<void>;
}

/** `ignoreDuplicates`: rows whose id is stored already are skipped (replay). */
export type InsertRows = (rows: RequestLogRow[], ignoreDuplicates?: boolean) => Promise<unknown>;

/** Writes one batch; reports through `emit`, never throws for a database error. */
export interface BatchWriter {
  write(batch: QueuedEntry[], emit: (event: WriterEvent) => void): Promise<void>;
  /** Inserts journal records (ignoring rows stored already); throws when they could not all be stored. */
  replay(text: string): Promise<ReplayResult>;
  close(): Promise<void>;
}

/** Half-open row ranges, one per INSERT statement: usually one; more only when the bodies would make it too large. */
export function statementRanges(rows: readonly RequestLogRow[], maxStatementBytes: number): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    // Characters times 3 bounds the UTF-8 size; 1 KiB covers the other columns.
    const size = 1024 + 3 * ((row.request_body?.length ?? 0) + (row.response_body?.length ?? 0));
    if (i > start && bytes + size > maxStatementBytes) {
      out.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (rows.length > start) out.push([start, rows.length]);
  return out;
}

export async function writeEntries(
  entries: readonly QueuedEntry[],
  insert: InsertRows,
  o: WriteOptions,
  emit: (event: WriterEvent) => void,
): Promise<void> {
  const rows: RequestLogRow[] = [];
  /** The entry each row came from. */
  const from: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    if (o.pause && i > 0 && i % o.rowsPerWrite === 0) await o.pause();
    const entry = entries[i]!;
    try {
      const row = toRow(entry, o.maxBodyBytes, o.bodyCompression);
      row.id = entry.rowId;
      rows.push(row);
      from.push(i);
    } catch (err) {
      emit({ kind: 'bad-entry', error: reason(err), traceId: String(entry?.traceId ?? '').slice(0, 128), index: i });
    }
  }
  const nextEntry = (row: number) => (row < rows.length ? from[row]! : entries.length);
  let first = true;
  for (const [start, end] of statementRanges(rows, o.maxStatementBytes)) {
    for (let p = start; p < end; p += o.rowsPerWrite) {
      const q = Math.min(end, p + o.rowsPerWrite);
      if (!first && o.pause) await o.pause();
      first = false;
      const part = rows.slice(p, q);
      for (let attempt = 1; ; attempt++) {
        try {
          await insert(part);
          break;
        } catch (err) {
          if (attempt >= 2) {
            // The database is most likely down or the table broken: the rest of the batch would fail the same way.
            emit({ kind: 'unwritten', error: reason(err), from: nextEntry(p), entries: rows.length - p });
            return;
          }
          emit({ kind: 'retry', error: reason(err), entries: part.length });
          await Bun.sleep(o.retryDelayMs);
        }
      }
      emit({ kind: 'written', rows: q - p, next: nextEntry(q), statement: q === end });
    }
  }
}

export interface ReplayResult {
  /** Rows inserted or found stored already. */
  rows: number;
  /** Records skipped: their checksum or JSON was wrong. */
  corrupt: number;
}

/** Journal records into the table, `rowsPerWrite` rows per insert, ignoring rows stored already. */
export async function replayText(text: string, insert: InsertRows, o: WriteOptions): Promise<ReplayResult> {
  const { rows, corrupt } = decodeRecords(text);
  for (let p = 0; p < rows.length; p += o.rowsPerWrite) {
    if (p > 0 && o.pause) await o.pause();
    await insert(rows.slice(p, p + o.rowsPerWrite), true);
  }
  return { rows: rows.length, corrupt };
}

/** Lets timers and I/O run (the main thread's requests) before the next part. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The writer on the calling thread, through the `database` service: small transactions, a yield between them. */
export class InThreadWriter implements BatchWriter {
  constructor(
    private readonly database: Pick<DatabaseHelpers, 'insert'>,
    private readonly o: WriteOptions,
  ) {}

  write(batch: QueuedEntry[], emit: (event: WriterEvent) => void): Promise<void> {
    return writeEntries(batch, (rows) => this.database.insert(requestLogs, rows), this.o, emit);
  }

  replay(text: string): Promise<ReplayResult> {
    return replayText(text, (rows, ignoreDuplicates) => this.database.insert(requestLogs, rows, { ignoreDuplicates }), this.o);
  }

  async close(): Promise<void> {}
}
