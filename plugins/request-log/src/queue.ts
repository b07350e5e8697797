/**
 * The request-log queue (ARCHITECTURE.md: nothing slow on the hot path). `enqueue` only stores a reference in a
 * bounded ring; a writer loop hands batches to a writer and waits for it. With `worker`, the writer is a thread
 * with its own database connection (writer.worker.ts): the main thread only posts the batch (in parts, yielding
 * between them); turning entries into rows and the INSERTs happen in that thread. Without it (an in-memory
 * database, tests) or when that thread cannot run, batches are written on this thread through `database`, in
 * small transactions with a yield between them. A database error never reaches the caller: the insert is tried
 * once more, then the rest of the batch is dropped and counted.
 */
import type { DatabaseHelpers, Logger } from '@gateway/sdk';
import type { LogEntry } from './entry.ts';
import { Ring } from './ring.ts';
import { WorkerWriter, type WorkerTarget, type WriterMode } from './worker-writer.ts';
import { InThreadWriter, reason, yieldToEventLoop, type BatchWriter, type WriterEvent } from './writer.ts';

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
  /**
   * Write in a worker thread that opens this database itself (the same database as `database`). Ignored for
   * `sqlite::memory:` (another connection would see another, empty database).
   */
  worker?: WorkerTarget;
  /** Rows per transaction when writing on this thread (between two, the thread serves other work). */
  mainThreadRows?: number;
}

export interface LogQueueStats {
  enqueued: number;
  written: number;
  /** Dropped because the queue was full. */
  droppedOverflow: number;
  /** Dropped after the write failed twice, or because the entry could not be turned into a row. */
  droppedFailed: number;
  /** INSERT statements that succeeded (on this thread, one statement is written as several small transactions). */
  inserts: number;
}

export interface LogWriterInfo {
  /** Where batches are written now. */
  mode: WriterMode;
  /** Whether a writer thread is running. */
  workerRunning: boolean;
  /** Times the writer thread was started again after dying. */
  restarts: number;
}

type Waiter = { upTo: number; resolve: () => void };

/** `sqlite::memory:`: a database private to one connection (another connection would see another, empty one). */
export const isMemoryUrl = (url: string): boolean => url.startsWith('sqlite:') && url.includes(':memory:');

export class LogQueue {
  readonly stats: LogQueueStats = { enqueued: 0, written: 0, droppedOverflow: 0, droppedFailed: 0, inserts: 0 };
  private readonly ring: Ring<LogEntry>;
  private readonly o: Required<Omit<LogQueueOptions, 'logger' | 'worker'>>;
  private readonly logger: Logger;
  private readonly mainThread: BatchWriter;
  /** The writer thread's side, when there is one. */
  private readonly thread: WorkerWriter | undefined;
  private writer: BatchWriter;
  private closing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The delay the pending timer was set with. */
  private timerMs: number | undefined;
  private running: Promise<void> | undefined;
  /** Sequence number of the first entry of the batch being written, while one is. */
  private inFlightFrom: number | undefined;
  private waiters: Waiter[] = [];

  /** `database`: the `database` service, for writing on this thread (always the case without `worker`). */
  constructor(database: Pick<DatabaseHelpers, 'insert'>, options: LogQueueOptions) {
    this.logger = options.logger;
    this.o = {
      // Short: entries hold bodies; the sooner they leave the main heap, the less survives into older GC generations.
      intervalMs: options.intervalMs ?? 100,
      batchSize: options.batchSize ?? 256,
      maxEntries: options.maxEntries ?? 50_000,
      maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
      retryDelayMs: options.retryDelayMs ?? 500,
      maxStatementBytes: options.maxStatementBytes ?? 8 * 1024 * 1024,
      mainThreadRows: Math.max(1, options.mainThreadRows ?? 64),
    };
    this.ring = new Ring(this.o.maxEntries);
    const settings = { maxBodyBytes: this.o.maxBodyBytes, maxStatementBytes: this.o.maxStatementBytes, retryDelayMs: this.o.retryDelayMs };
    this.mainThread = new InThreadWriter(database, { ...settings, rowsPerWrite: this.o.mainThreadRows, pause: yieldToEventLoop });
    // SQLite: the thread's transactions hold the file's write lock, which a main-thread writer (another plugin)
    // would wait for, synchronously; short transactions keep that wait short. MySQL: one statement per batch.
    const threadRows = options.worker?.url.startsWith('sqlite:') ? 100 : Number.MAX_SAFE_INTEGER;
    this.thread =
      options.worker && !isMemoryUrl(options.worker.url)
        ? new WorkerWriter(options.worker, this.mainThread, { settings: { ...settings, rowsPerWrite: threadRows }, logger: this.logger })
        : undefined;
    this.writer = this.thread ?? this.mainThread;
  }

  /** Where batches are written: a writer thread, or this thread. */
  get writerInfo(): LogWriterInfo {
    const t = this.thread;
    if (t) return { mode: t.mode, workerRunning: t.workerRunning, restarts: t.restarts };
    return { mode: this.closing ? 'closed' : 'main-thread', workerRunning: false, restarts: 0 };
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
    // (A write already due at once is not set again for every further entry.)
    if (this.ring.size >= this.o.batchSize) {
      if (this.timerMs !== 0) this.schedule(0);
    } else if (!this.timer) this.schedule(this.o.intervalMs);
  }

  /** Resolves when every entry enqueued before the call has been written or dropped. Never rejects. */
  flush(): Promise<void> {
    const upTo = this.stats.enqueued;
    if (this.doneUpTo() >= upTo) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push({ upTo, resolve }));
    this.start();
    return done;
  }

  /**
   * At shutdown: writes what is queued, then stops the writer thread (its connection closed, the thread terminated).
   * Entries enqueued later are written on this thread. Never rejects.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.flush();
      const writer = this.writer;
      this.writer = this.mainThread;
      try {
        await writer.close();
      } catch (err) {
        this.logger.error({ error: reason(err) }, 'request log writer did not close cleanly');
      }
      // Entries that came in while the thread was closing went to it and were finished; any later ones here.
      await this.flush();
    })());
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
    this.timerMs = ms;
    // A pending log write must not keep the process alive; shutdown flushes explicitly (onClose).
    this.timer.unref?.();
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerMs = undefined;
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
      let accounted = 0;
      const emit = (event: WriterEvent) => {
        accounted += accountedBy(event);
        this.onEvent(event);
      };
      try {
        await this.writer.write(batch, emit);
      } catch (err) {
        // Writers report database errors as events; this is a bug, and still must not stop the queue.
        this.stats.droppedFailed += Math.max(0, batch.length - accounted);
        this.logger.error({ error: reason(err) }, 'request log writer failed');
      }
      this.inFlightFrom = undefined;
      this.settleWaiters();
    }
  }

  /** Stats and log lines from what a writer reports (on this thread, whichever thread wrote). */
  private onEvent(event: WriterEvent): void {
    switch (event.kind) {
      case 'written':
        this.stats.written += event.rows;
        if (event.statement) this.stats.inserts++;
        return;
      case 'retry':
        this.logger.error({ error: event.error, entries: event.entries }, 'request log write failed; retrying once');
        return;
      case 'dropped':
        this.stats.droppedFailed += event.dropped;
        this.logger.warn(
          { error: event.error, dropped: event.dropped, droppedTotal: this.stats.droppedFailed },
          'request log batch dropped after a failed retry',
        );
        return;
      case 'bad-entry':
        this.stats.droppedFailed++;
        this.logger.warn({ error: event.error, traceId: event.traceId }, 'request log entry could not be stored; dropped');
        return;
      case 'lost':
        this.stats.droppedFailed += event.dropped;
        this.logger.error({ error: event.error, dropped: event.dropped, droppedTotal: this.stats.droppedFailed }, 'request log writer failed');
        return;
    }
  }
}

/** Entries an event settles (stored or dropped). */
function accountedBy(event: WriterEvent): number {
  switch (event.kind) {
    case 'written':
      return event.rows;
    case 'dropped':
    case 'lost':
      return event.dropped;
    case 'bad-entry':
      return 1;
    default:
      return 0;
  }
}
