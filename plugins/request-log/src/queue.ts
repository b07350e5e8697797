/**
 * The request-log queue (ARCHITECTURE.md: nothing slow on the hot path). `enqueue` only stores a reference in a
 * bounded ring; a writer loop turns batches into rows and writes each batch with one multi-row INSERT. A database
 * error never reaches the caller: the batch is tried once more, then dropped and counted.
 */
import type { DatabaseHelpers, Logger } from '@gateway/sdk';
import type { LogEntry } from './entry.ts';
import { Ring } from './ring.ts';
import { toRow, type RequestLogRow } from './row.ts';
import { requestLogs } from './table.ts';

export interface LogQueueOptions {
  logger: Logger;
  /** Write at least this often while entries wait (ms). */
  intervalMs?: number;
  /** Write as soon as this many entries wait; also the most rows per INSERT. */
  batchSize?: number;
  /** Entries kept at most; beyond it the oldest are dropped (and counted). */
  maxEntries?: number;
  /** Cap of each stored body, in UTF-8 bytes. */
  maxBodyBytes?: number;
  /** Pause before the one retry of a failed batch (ms). */
  retryDelayMs?: number;
  /** Bytes of body text per INSERT at most, so that a batch of large bodies stays under max_allowed_packet. */
  maxStatementBytes?: number;
}

export interface LogQueueStats {
  enqueued: number;
  written: number;
  /** Dropped because the queue was full. */
  droppedOverflow: number;
  /** Dropped after the write failed twice, or because the entry could not be turned into a row. */
  droppedFailed: number;
  /** INSERT statements that succeeded. */
  inserts: number;
}

type Waiter = { upTo: number; resolve: () => void };

/** The driver's reason only: drizzle's own message repeats the statement and its parameters (the bodies). */
function reason(err: unknown): { message: string; code?: unknown } {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  return { message: message.slice(0, 300), code: (cause as { code?: unknown } | null)?.code };
}

export class LogQueue {
  readonly stats: LogQueueStats = { enqueued: 0, written: 0, droppedOverflow: 0, droppedFailed: 0, inserts: 0 };
  private readonly ring: Ring<LogEntry>;
  private readonly o: Required<Omit<LogQueueOptions, 'logger'>>;
  private readonly logger: Logger;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  /** Sequence number of the first entry of the batch being written, while one is. */
  private inFlightFrom: number | undefined;
  private waiters: Waiter[] = [];

  constructor(
    private readonly database: Pick<DatabaseHelpers, 'insert'>,
    options: LogQueueOptions,
  ) {
    this.logger = options.logger;
    this.o = {
      intervalMs: options.intervalMs ?? 250,
      batchSize: options.batchSize ?? 500,
      maxEntries: options.maxEntries ?? 50_000,
      maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
      retryDelayMs: options.retryDelayMs ?? 500,
      maxStatementBytes: options.maxStatementBytes ?? 8 * 1024 * 1024,
    };
    this.ring = new Ring(this.o.maxEntries);
  }

  /** Entries waiting to be written. */
  get size(): number {
    return this.ring.size;
  }

  /** Synchronous and O(1): no I/O, no parsing. */
  enqueue(entry: LogEntry): void {
    this.stats.enqueued++;
    if (this.ring.push(entry)) {
      this.stats.droppedOverflow++;
      // One warning per 1 000 drops: a full queue must not flood the log as well.
      if (this.stats.droppedOverflow % 1000 === 1) {
        this.logger.warn({ dropped: this.stats.droppedOverflow, maxEntries: this.o.maxEntries }, 'request log queue full; dropping the oldest entries');
      }
      if (this.waiters.length) this.settleWaiters();
    }
    if (this.running) return;
    if (this.ring.size >= this.o.batchSize) this.schedule(0);
    else if (!this.timer) this.schedule(this.o.intervalMs);
  }

  /** Resolves when every entry enqueued before the call has been written or dropped. Never rejects. */
  flush(): Promise<void> {
    const upTo = this.stats.enqueued;
    if (this.doneUpTo() >= upTo) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push({ upTo, resolve }));
    this.start();
    return done;
  }

  /** Every entry enqueued before entry number `n` (1-based) has left the queue. */
  private doneUpTo(): number {
    return this.inFlightFrom !== undefined ? this.inFlightFrom - 1 : this.stats.enqueued - this.ring.size;
  }

  private settleWaiters(): void {
    const done = this.doneUpTo();
    this.waiters = this.waiters.filter((w) => (w.upTo <= done ? (w.resolve(), false) : true));
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), ms);
    // A pending log write must not keep the process alive; shutdown flushes explicitly (onClose).
    this.timer.unref?.();
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      // Entries that came in while the last batch was being written.
      if (this.ring.size > 0) this.schedule(this.ring.size >= this.o.batchSize ? 0 : this.o.intervalMs);
    });
  }

  private async drain(): Promise<void> {
    while (this.ring.size > 0) {
      this.inFlightFrom = this.stats.enqueued - this.ring.size + 1;
      const batch = this.ring.take(this.o.batchSize);
      try {
        await this.writeBatch(batch);
      } catch (err) {
        // writeBatch handles database errors; this is a bug, and still must not stop the queue.
        this.stats.droppedFailed += batch.length;
        this.logger.error({ error: reason(err) }, 'request log writer failed');
      }
      this.inFlightFrom = undefined;
      this.settleWaiters();
    }
  }

  private async writeBatch(batch: LogEntry[]): Promise<void> {
    const rows: RequestLogRow[] = [];
    for (const entry of batch) {
      try {
        rows.push(toRow(entry, this.o.maxBodyBytes));
      } catch (err) {
        this.stats.droppedFailed++;
        this.logger.warn({ error: reason(err), traceId: entry.traceId }, 'request log entry could not be stored; dropped');
      }
    }
    for (const chunk of this.chunks(rows)) await this.writeChunk(chunk);
  }

  /** Usually one chunk; more only when the bodies together would make one statement too large. */
  private chunks(rows: RequestLogRow[]): RequestLogRow[][] {
    const out: RequestLogRow[][] = [];
    let current: RequestLogRow[] = [];
    let bytes = 0;
    for (const row of rows) {
      // Characters times 3 bounds the UTF-8 size; 1 KiB covers the other columns.
      const size = 1024 + 3 * ((row.request_body?.length ?? 0) + (row.response_body?.length ?? 0));
      if (current.length && bytes + size > this.o.maxStatementBytes) {
        out.push(current);
        current = [];
        bytes = 0;
      }
      current.push(row);
      bytes += size;
    }
    if (current.length) out.push(current);
    return out;
  }

  private async writeChunk(rows: RequestLogRow[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.database.insert(requestLogs, rows);
        this.stats.inserts++;
        this.stats.written += rows.length;
        return;
      } catch (err) {
        if (attempt >= 2) {
          this.stats.droppedFailed += rows.length;
          this.logger.warn(
            { error: reason(err), dropped: rows.length, droppedTotal: this.stats.droppedFailed },
            'request log batch dropped after a failed retry',
          );
          return;
        }
        this.logger.error({ error: reason(err), entries: rows.length }, 'request log write failed; retrying once');
        await Bun.sleep(this.o.retryDelayMs);
      }
    }
  }
}
