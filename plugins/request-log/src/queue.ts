/**
 * The request-log queue (ARCHITECTURE.md: nothing slow on the hot path). `enqueue` gives the entry its row id and
 * stores a reference (O(1), no I/O); one drain loop hands batches to a writer and waits for it. With `worker`, the
 * writer is a thread with its own database connection (writer.worker.ts); without it (an in-memory database, tests)
 * or when that thread cannot run, batches are written on this thread, in small transactions with a yield between.
 *
 * Nothing is lost while a journal is configured (journal.ts): when the queue holds more than `maxBytes`, or a batch
 * cannot be written (retried once), entries are turned into rows and appended to the journal, off the request path;
 * from then on new entries go to the journal too (one order), and the drain loop replays it into the table, batch by
 * batch, with "ignore duplicates" (every row's id was fixed at enqueue), backing off while the database still fails.
 * Once the journal is empty, entries go straight to the database again. Only an append the journal's disk budget
 * refuses drops entries (counted). Without a journal, the oldest entries past `maxBytes` and failed batches are
 * dropped and counted, as before.
 */
import type { DatabaseHelpers, Logger } from '@gateway/sdk';
import type { BodyCompression } from './body-compression.ts';
import type { LogEntry } from './entry.ts';
import type { Journal } from './journal.ts';
import { encodeRecord } from './journal-record.ts';
import { estimatedBytes, withRowId, type QueuedEntry } from './queued.ts';
import { Ring } from './ring.ts';
import { toRow } from './row.ts';
import { WorkerWriter, type WorkerTarget, type WriterMode } from './worker-writer.ts';
import { InThreadWriter, reason, yieldToEventLoop, type BatchWriter, type ErrorInfo, type WriterEvent } from './writer.ts';

export interface LogQueueOptions {
  logger: Logger;
  /** Write at least this often while entries wait (ms). */
  intervalMs?: number;
  /** Write as soon as this many entries wait; also the most entries per batch. */
  batchSize?: number;
  /** Estimated bytes of entries held in memory at most (queued.ts); past it they spill to the journal, or are dropped. */
  maxBytes?: number;
  /** Cap of each stored body, in UTF-8 bytes. */
  maxBodyBytes?: number;
  /** How bodies are stored once capped (LOG_BODY_COMPRESSION, body-compression.ts); default none. */
  bodyCompression?: BodyCompression;
  /** Pause before the one retry of a failed batch (ms); also the first replay back-off. */
  retryDelayMs?: number;
  /** Longest pause between replays while the database still fails (ms). */
  maxBackoffMs?: number;
  /** Bytes of body text per INSERT at most, so that a batch of large bodies stays under max_allowed_packet. */
  maxStatementBytes?: number;
  /**
   * Write in a worker thread that opens this database itself (the same database as `database`). Ignored for
   * `sqlite::memory:` (another connection would see another, empty database).
   */
  worker?: WorkerTarget;
  /** Rows per transaction when writing on this thread (between two, the thread serves other work). */
  mainThreadRows?: number;
  /** Where entries go when the database cannot take them now; without one they are dropped (counted). */
  journal?: Journal;
  /** Bytes of journal records per replay batch. */
  replayBytes?: number;
  /**
   * The writer thread's nice value while the log is behind (the queue past BEHIND_BYTES or a quarter of `maxBytes`, or
   * the journal holding records), and once it has caught up again (GATEWAY_LOG_WRITER_NICE_BEHIND, GATEWAY_LOG_WRITER_NICE).
   * Undefined: the thread keeps the nice value it started with.
   */
  writerNice?: { base: number; behind: number };
}

export interface LogQueueStats {
  enqueued: number;
  /** Rows stored straight from the queue. */
  written: number;
  /** Entries appended to the journal. */
  journaled: number;
  /** Rows stored from the journal (rows found stored already included). */
  replayed: number;
  /** Dropped because the queue was full and there is no journal. */
  droppedOverflow: number;
  /** Dropped after the write failed twice with no journal, or because the entry could not be turned into a row. */
  droppedFailed: number;
  /** Dropped because the journal's disk budget was used up (or the journal could not be written). */
  droppedJournalFull: number;
  /** Journal records skipped on replay: damaged (checksum or JSON wrong). */
  corruptRecords: number;
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
  /** The writer thread's kernel id, once it is ready (Linux); its priority is set through it. */
  threadId?: number;
}

/** What /health shows of the log pipeline. */
export interface LogPipelineHealth {
  status: 'ok' | 'degraded';
  /** Why degraded: `database_failing`, `replaying_journal`, `dropping`. */
  reasons: string[];
  queueEntries: number;
  queueBytes: number;
  journalBytes: number;
  journalPendingBytes: number;
  dropped: number;
  /** The last database error, while writes fail. */
  lastError?: ErrorInfo;
}

type Waiter = { upTo: number; resolve: () => void };

/** `sqlite::memory:`: a database private to one connection (another connection would see another, empty one). */
export const isMemoryUrl = (url: string): boolean => url.startsWith('sqlite:') && url.includes(':memory:');

/** Entries turned into journal records between two yields of this thread. */
const RECORDS_PER_SLICE = 200;
/** Entries per journal append (one write, one fsync) at most. */
const SPILL_BATCH = 10_000;
/**
 * The log is behind once this much waits (or a quarter of maxBytes, if less): a few batches at full load. Every
 * queued entry holds its request's bodies on the main thread's heap; a queue let grow to a quarter of the default
 * 64 MiB budget before the writer was raised cost the request path more in collection than the writer's CPU it
 * deferred, and held hundreds of MB (docs/performance.md, "The writer's priority").
 */
const BEHIND_BYTES = 4 * 1024 * 1024;
/** A drop within this long keeps /health degraded. */
const RECENT_DROP_MS = 60_000;

export class LogQueue {
  readonly stats: LogQueueStats = {
    enqueued: 0,
    written: 0,
    journaled: 0,
    replayed: 0,
    droppedOverflow: 0,
    droppedFailed: 0,
    droppedJournalFull: 0,
    corruptRecords: 0,
    inserts: 0,
  };
  private readonly ring = new Ring<QueuedEntry>();
  private queuedBytes = 0;
  /** Estimated bytes of entries taken from the ring for the journal and not appended yet. */
  private spillingBytes = 0;
  private readonly o: Required<Omit<LogQueueOptions, 'logger' | 'worker' | 'journal' | 'writerNice'>>;
  private readonly writerNice: LogQueueOptions['writerNice'];
  /** The writer thread runs at its `behind` priority. */
  private behind = false;
  /** Queued bytes past which the log is behind (updatePriority). */
  private readonly behindBytes: number;
  private readonly logger: Logger;
  private readonly mainThread: BatchWriter;
  /** The writer thread's side, when there is one. */
  private readonly thread: WorkerWriter | undefined;
  private writer: BatchWriter;
  /** Released at close: entries after that are written on this thread, as without a journal. */
  private journal: Journal | undefined;
  private closing: Promise<void> | undefined;
  private stopping = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The delay the pending timer was set with. */
  private timerMs: number | undefined;
  private running: Promise<void> | undefined;
  /** A batch smaller than batchSize may be written now. */
  private partialDue = false;
  /** Entries taken from the ring and not yet settled (being written or journaled). */
  private inFlight = 0;
  /** Appends to the journal, one after the other. */
  /** Entries waiting for the journal's appender, oldest first. */
  private readonly spilling = new Ring<QueuedEntry>();
  /** The appender's loop, while it runs. */
  private appender: Promise<void> | undefined;
  private spillScheduled = false;
  private waiters: Waiter[] = [];
  private lastError: ErrorInfo | undefined;
  private lastDropAt = 0;
  private backoff: { timer: ReturnType<typeof setTimeout>; resolve: () => void } | undefined;

  /** `database`: the `database` service, for writing on this thread (always the case without `worker`). */
  constructor(database: Pick<DatabaseHelpers, 'insert'>, options: LogQueueOptions) {
    this.logger = options.logger;
    this.o = {
      // Short: entries hold bodies; the sooner they leave the main heap, the less survives into older GC generations.
      intervalMs: options.intervalMs ?? 100,
      batchSize: options.batchSize ?? 1000,
      maxBytes: options.maxBytes ?? 64 * 1024 * 1024,
      maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
      bodyCompression: options.bodyCompression ?? 'none',
      retryDelayMs: options.retryDelayMs ?? 500,
      maxBackoffMs: options.maxBackoffMs ?? 2_000,
      maxStatementBytes: options.maxStatementBytes ?? 8 * 1024 * 1024,
      mainThreadRows: Math.max(1, options.mainThreadRows ?? 64),
      replayBytes: options.replayBytes ?? 1024 * 1024,
    };
    this.journal = options.journal;
    this.writerNice = options.writerNice;
    this.behindBytes = Math.min(this.o.maxBytes / 4, BEHIND_BYTES);
    const settings = {
      maxBodyBytes: this.o.maxBodyBytes,
      maxStatementBytes: this.o.maxStatementBytes,
      retryDelayMs: this.o.retryDelayMs,
      bodyCompression: this.o.bodyCompression,
    };
    this.mainThread = new InThreadWriter(database, { ...settings, rowsPerWrite: this.o.mainThreadRows, pause: yieldToEventLoop });
    // SQLite: the thread's transactions hold the file's write lock, which a main-thread writer (another plugin)
    // would wait for, synchronously; short transactions keep that wait short. MySQL: one statement per batch.
    const threadRows = options.worker?.url.startsWith('sqlite:') ? 250 : Number.MAX_SAFE_INTEGER;
    this.thread =
      options.worker && !isMemoryUrl(options.worker.url)
        ? new WorkerWriter(options.worker, this.mainThread, { settings: { ...settings, rowsPerWrite: threadRows }, logger: this.logger })
        : undefined;
    this.writer = this.thread ?? this.mainThread;
    // Records an earlier process left: replayed from the start.
    if (this.journal && this.journal.pendingBytes > 0) {
      this.logger.info({ journalBytes: this.journal.pendingBytes }, 'request log journal found; replaying it');
      this.schedule(0);
    }
  }

  /** Where batches are written: a writer thread, or this thread. */
  get writerInfo(): LogWriterInfo {
    const t = this.thread;
    if (t) return { mode: t.mode, workerRunning: t.workerRunning, restarts: t.restarts, threadId: t.threadId };
    return { mode: this.closing ? 'closed' : 'main-thread', workerRunning: false, restarts: 0 };
  }

  /** Whether the writer thread runs at its `behind` priority now (the log is catching up). */
  get writerBehind(): boolean {
    return this.behind;
  }

  /** Entries waiting in memory. */
  get size(): number {
    return this.ring.size;
  }

  /** Their estimated bytes, with those of entries being appended to the journal. */
  get bytes(): number {
    return this.queuedBytes + this.spillingBytes;
  }

  /** The journal's bytes on disk (0 without one). */
  get journalBytes(): number {
    return this.journal?.diskBytes ?? 0;
  }

  /** Journal bytes not replayed yet. */
  get journalPendingBytes(): number {
    return this.journal?.pendingBytes ?? 0;
  }

  /** Every entry dropped, for whatever reason. */
  get dropped(): number {
    const s = this.stats;
    return s.droppedOverflow + s.droppedFailed + s.droppedJournalFull + s.corruptRecords;
  }

  health(now = Date.now()): LogPipelineHealth {
    const reasons: string[] = [];
    if (this.lastError) reasons.push('database_failing');
    if (this.journalPendingBytes > 0) reasons.push('replaying_journal');
    if (this.lastDropAt > 0 && now - this.lastDropAt < RECENT_DROP_MS) reasons.push('dropping');
    return {
      status: reasons.length ? 'degraded' : 'ok',
      reasons,
      queueEntries: this.ring.size,
      queueBytes: this.bytes,
      journalBytes: this.journalBytes,
      journalPendingBytes: this.journalPendingBytes,
      dropped: this.dropped,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** Synchronous and O(1): no I/O, no parsing. */
  enqueue(entry: LogEntry): void {
    const queued = withRowId(entry);
    const bytes = estimatedBytes(entry);
    queued.queuedBytes = bytes;
    this.stats.enqueued++;
    this.ring.push(queued);
    this.queuedBytes += bytes;
    // Judged as the queue grows, not only between batches: a batch being written at nice 19 under full load may
    // take seconds, and the queue must not grow all that while.
    if (!this.behind && this.queuedBytes > this.behindBytes) this.updatePriority();
    if (this.journal) {
      if (this.queuedBytes > this.o.maxBytes || this.journaling()) this.scheduleSpill();
    } else if (this.queuedBytes > this.o.maxBytes) this.dropOldest();
    if (this.running) return;
    // (A write already due at once is not set again for every further entry.)
    if (this.ring.size >= this.o.batchSize) {
      if (this.timerMs !== 0) this.schedule(0);
    } else if (!this.timer) this.schedule(this.o.intervalMs);
  }

  /** Resolves when every entry enqueued before the call has been written, journaled or dropped. Never rejects. */
  flush(): Promise<void> {
    const upTo = this.stats.enqueued;
    if (this.settled() >= upTo) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push({ upTo, resolve }));
    if (this.journal && this.journaling()) this.scheduleSpill();
    this.start();
    return done;
  }

  /**
   * At shutdown: writes (or journals) what is queued, then stops the writer thread (its connection closed, the
   * thread terminated) and releases the journal, whose records wait for the next start. Never rejects.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.flush();
      this.stopping = true;
      this.backoff?.resolve();
      await this.running;
      const writer = this.writer;
      this.writer = this.mainThread;
      try {
        await writer.close();
      } catch (err) {
        this.logger.error({ error: reason(err) }, 'request log writer did not close cleanly');
      }
      // Entries that came in while the thread was closing: journaled for the next start, or written here.
      if (this.journal) this.spill(this.take(this.ring.size));
      else {
        this.stopping = false;
        await this.flush();
        this.stopping = true;
        await this.running;
      }
      while (this.appender) await this.appender;
      await this.journal?.close();
      this.journal = undefined;
      this.stopping = false;
    })());
  }

  /** Entries written, journaled or dropped. */
  private settled(): number {
    return this.stats.enqueued - this.ring.size - this.inFlight;
  }

  /** Whether new entries go to the journal: it holds records not replayed yet (one order: theirs first). */
  private journaling(): boolean {
    return this.journal !== undefined && (this.journal.pendingBytes > 0 || this.spilling.size > 0 || this.appender !== undefined);
  }

  private settleWaiters(): void {
    const done = this.settled();
    this.waiters = this.waiters.filter((w) => (w.upTo <= done ? (w.resolve(), false) : true));
  }

  private take(n: number): QueuedEntry[] {
    const batch = this.ring.take(n);
    for (const entry of batch) this.queuedBytes -= entry.queuedBytes ?? 0;
    this.inFlight += batch.length;
    return batch;
  }

  /** No journal: the oldest entries past the byte budget are dropped and counted. */
  private dropOldest(): void {
    let dropped = 0;
    while (this.queuedBytes > this.o.maxBytes && this.ring.size > 1) {
      const entry = this.ring.shift()!;
      this.queuedBytes -= entry.queuedBytes ?? 0;
      dropped++;
    }
    if (dropped === 0) return;
    const before = this.stats.droppedOverflow;
    this.stats.droppedOverflow += dropped;
    this.lastDropAt = Date.now();
    // One warning per 1 000 drops: a full queue must not flood the log as well.
    if (Math.floor(before / 1000) !== Math.floor(this.stats.droppedOverflow / 1000) || before === 0) {
      this.logger.warn({ dropped: this.stats.droppedOverflow, maxBytes: this.o.maxBytes }, 'request log queue full; dropping the oldest entries');
    }
    if (this.waiters.length) this.settleWaiters();
  }

  private scheduleSpill(): void {
    if (this.spillScheduled) return;
    this.spillScheduled = true;
    setImmediate(() => {
      this.spillScheduled = false;
      this.spill(this.take(this.ring.size));
    });
  }

  /**
   * Hands entries to the journal's appender (never on the caller's stack: the appender awaits its I/O). They wait in
   * `spilling`, in order, counted in `bytes`, until appended.
   */
  private spill(entries: QueuedEntry[]): void {
    for (const entry of entries) {
      this.spilling.push(entry);
      this.spillingBytes += entry.queuedBytes ?? 0;
    }
    if (this.spilling.size === 0) return;
    this.appender ??= this.appendLoop().finally(() => {
      this.appender = undefined;
      if (this.spilling.size > 0) this.spill([]);
      // The drain loop replays what was just journaled.
      else if (!this.stopping) this.start();
    });
  }

  /**
   * Group commit: each round appends everything waiting (up to SPILL_BATCH entries) as one write and, with fsync
   * `batch`, one flush to the device; the busier the traffic, the more entries share a flush, so the appender keeps
   * pace with arrivals instead of queueing them in memory one small append (and one fsync) at a time.
   */
  private async appendLoop(): Promise<void> {
    while (this.spilling.size > 0) {
      const entries = this.spilling.take(SPILL_BATCH);
      let bytes = 0;
      for (const entry of entries) bytes += entry.queuedBytes ?? 0;
      try {
        await this.appendEntries(entries);
      } catch (err) {
        this.stats.droppedJournalFull += entries.length;
        this.logger.error({ error: reason(err), dropped: entries.length }, 'request log journal could not be written; entries dropped');
      } finally {
        this.spillingBytes -= bytes;
        this.inFlight -= entries.length;
        this.settleWaiters();
      }
    }
  }

  private async appendEntries(entries: QueuedEntry[]): Promise<void> {
    const journal = this.journal!;
    const records: string[] = [];
    for (let i = 0; i < entries.length; i++) {
      if (i > 0 && i % RECORDS_PER_SLICE === 0) await yieldToEventLoop();
      const entry = entries[i]!;
      try {
        const row = toRow(entry, this.o.maxBodyBytes, this.o.bodyCompression);
        row.id = entry.rowId;
        records.push(encodeRecord(row));
      } catch (err) {
        this.stats.droppedFailed++;
        this.lastDropAt = Date.now();
        this.logger.warn({ error: reason(err), traceId: String(entry.traceId ?? '').slice(0, 128) }, 'request log entry could not be stored; dropped');
      }
    }
    if (records.length === 0) return;
    let stored = 0;
    try {
      if (await journal.append(records.join(''))) stored = records.length;
      // Near the budget: as many as still fit, one by one (the rest is dropped).
      else while (stored < records.length && (await journal.append(records[stored]!))) stored++;
    } catch (err) {
      this.logger.error({ error: reason(err), dropped: records.length - stored }, 'request log journal could not be written; entries dropped');
    }
    this.stats.journaled += stored;
    if (stored === records.length) return;
    const before = this.stats.droppedJournalFull;
    this.stats.droppedJournalFull += records.length - stored;
    this.lastDropAt = Date.now();
    if (Math.floor(before / 1000) !== Math.floor(this.stats.droppedJournalFull / 1000) || before === 0) {
      this.logger.error(
        { dropped: this.stats.droppedJournalFull, journalBytes: journal.diskBytes, maxBytes: journal.maxBytes },
        'request log journal full; dropping entries',
      );
    }
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), ms);
    this.timerMs = ms;
    // A pending log write must not keep the process alive; shutdown flushes explicitly (onClose).
    this.timer.unref?.();
  }

  private start(): void {
    // Started by the timer or a flush: a partial batch may go now (the interval is over, or someone waits).
    this.partialDue = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerMs = undefined;
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.stopping) return;
      // Entries that came in while the last batch was being written.
      // A flush that came while the loop was ending waits for them: at once.
      if (this.ring.size > 0 && !this.journaling()) this.schedule(this.ring.size >= this.o.batchSize || this.waiters.length ? 0 : this.o.intervalMs);
    });
  }

  /**
   * A writer thread at nice 19 gets almost no CPU while requests use it all, so under full load the log would only
   * ever fall further behind: while it is behind, the thread runs at the `behind` priority (default 0, the request
   * path's), and goes back once the queue is short and the journal empty (hysteresis: `behindBytes`, a quarter of it).
   */
  private updatePriority(): void {
    if (!this.thread || !this.writerNice) return;
    const pending = this.journalPendingBytes > 0;
    const behind = this.behind ? pending || this.queuedBytes > this.behindBytes / 4 : pending || this.queuedBytes > this.behindBytes;
    if (behind === this.behind) return;
    this.behind = behind;
    this.thread.setPriority(behind ? this.writerNice.behind : this.writerNice.base);
    this.logger.debug({ behind, queueBytes: this.queuedBytes, journalBytes: this.journalPendingBytes }, 'request log writer priority changed');
  }

  private async drain(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      this.updatePriority();
      // Journal mode: what waits in memory goes behind the journal's records (one order), also what was queued
      // before the journal began, which no later enqueue would move.
      if (this.ring.size > 0 && this.journaling()) this.spill(this.take(this.ring.size));
      if (this.journal && this.journal.pendingBytes > 0) {
        if (await this.replayOnce()) failures = 0;
        else await this.sleep(Math.min(this.o.maxBackoffMs, this.o.retryDelayMs * 2 ** failures++));
        continue;
      }
      if (this.journaling()) {
        // An append is under way: the replay starts once it is done (spill() starts the loop again).
        return;
      }
      if (this.ring.size === 0) {
        this.updatePriority();
        return;
      }
      if (this.journal && this.queuedBytes > this.o.maxBytes) {
        this.scheduleSpill();
        return;
      }
      // A partial batch that came while the last was written waits for the interval (bigger batches, fewer inserts).
      if (this.ring.size < this.o.batchSize && !this.partialDue && this.waiters.length === 0) return;
      this.partialDue = false;
      await this.writeBatch(this.take(this.o.batchSize));
    }
  }

  /** One batch from the ring: what the database did not take goes to the journal (or is dropped without one). */
  private async writeBatch(batch: QueuedEntry[]): Promise<void> {
    let accounted = 0;
    const bad = new Set<number>();
    let unwrittenFrom = -1;
    const emit = (event: WriterEvent) => {
      if (event.kind === 'bad-entry') bad.add(event.index);
      if (event.kind === 'unwritten') unwrittenFrom = event.from;
      accounted += this.onEvent(event);
    };
    try {
      await this.writer.write(batch, emit);
    } catch (err) {
      // Writers report database errors as events; this is a bug, and still must not stop the queue.
      this.stats.droppedFailed += Math.max(0, batch.length - accounted);
      this.lastDropAt = Date.now();
      this.logger.error({ error: reason(err) }, 'request log writer failed');
    }
    if (unwrittenFrom >= 0 && this.journal) {
      const rest = batch.filter((_, i) => i >= unwrittenFrom && !bad.has(i));
      // Stays in flight until appended; what the journal refuses is counted there.
      this.inFlight -= batch.length - rest.length;
      this.spill(rest);
    } else this.inFlight -= batch.length;
    this.settleWaiters();
  }

  /** One batch of journal records into the table; false when the database refused it (the records stay). */
  private async replayOnce(): Promise<boolean> {
    const journal = this.journal!;
    let batch: Awaited<ReturnType<Journal['read']>>;
    try {
      batch = await journal.read(this.o.replayBytes);
    } catch (err) {
      this.logger.error({ error: reason(err) }, 'request log journal could not be read');
      return false;
    }
    // Pending bytes with nothing readable: wait (the back-off) rather than spin.
    if (!batch) return false;
    try {
      const result = batch.text ? await this.writer.replay(batch.text) : { rows: 0, corrupt: 0 };
      if (this.lastError) this.logger.info({ replayed: this.stats.replayed }, 'request log database writes work again');
      this.lastError = undefined;
      this.stats.replayed += result.rows;
      if (result.corrupt) {
        this.stats.corruptRecords += result.corrupt;
        this.lastDropAt = Date.now();
        this.logger.error({ corrupt: result.corrupt }, 'request log journal records damaged; skipped');
      }
      await journal.commit(batch.next);
      if (journal.pendingBytes === 0) this.logger.info({ replayed: this.stats.replayed }, 'request log journal replayed');
      return true;
    } catch (err) {
      const error = reason(err);
      if (!this.lastError) this.logger.error({ error, journalBytes: journal.pendingBytes }, 'request log journal replay failed; retrying with back-off');
      this.lastError = error;
      return false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.backoff = undefined;
        resolve();
      }, ms);
      timer.unref?.();
      this.backoff = {
        timer,
        resolve: () => {
          clearTimeout(timer);
          this.backoff = undefined;
          resolve();
        },
      };
    });
  }

  /** Stats and log lines from what a writer reports; returns how many entries the event settles. */
  private onEvent(event: WriterEvent): number {
    switch (event.kind) {
      case 'written':
        this.stats.written += event.rows;
        if (event.statement) this.stats.inserts++;
        this.lastError = undefined;
        return event.rows;
      case 'retry':
        this.logger.error({ error: event.error, entries: event.entries }, 'request log write failed; retrying once');
        return 0;
      case 'unwritten':
        this.lastError = event.error;
        if (this.journal) {
          this.logger.warn({ error: event.error, journaled: event.entries }, 'request log batch not written; journaled for replay');
          return 0;
        }
        this.stats.droppedFailed += event.entries;
        this.lastDropAt = Date.now();
        this.logger.warn(
          { error: event.error, dropped: event.entries, droppedTotal: this.stats.droppedFailed },
          'request log batch dropped after a failed retry',
        );
        return event.entries;
      case 'bad-entry':
        this.stats.droppedFailed++;
        this.lastDropAt = Date.now();
        this.logger.warn({ error: event.error, traceId: event.traceId }, 'request log entry could not be stored; dropped');
        return 1;
      case 'lost':
        this.stats.droppedFailed += event.dropped;
        this.lastDropAt = Date.now();
        this.logger.error({ error: event.error, dropped: event.dropped, droppedTotal: this.stats.droppedFailed }, 'request log writer failed');
        return event.dropped;
    }
  }
}
