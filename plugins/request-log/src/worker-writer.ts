/**
 * The main thread's side of the writer thread: posts each batch (in parts, yielding between them) and resolves when
 * the thread acknowledges it. The thread never takes the process down with it: its errors arrive as messages; if
 * it dies, it is started again once and the unfinished part of the batch in flight is sent again (once); after a
 * second death, or when it cannot open the database, batches are written on the main thread (the fallback writer).
 */
import type { DatabaseConnection, Logger } from '@gateway/sdk';
import type { FromWorker, ToWorker } from './protocol.ts';
import { setThreadPriority } from './low-priority.ts';
import type { QueuedEntry } from './queued.ts';
import { toWirePart, type WirePart } from './wire.ts';
import {
  reason,
  yieldToEventLoop,
  type BatchWriter,
  type ErrorInfo,
  type ReplayResult,
  type WriterEvent,
  type WriteSettings,
} from './writer.ts';

/** The database the thread opens (the same database as the `database` service's), and how. */
export interface WorkerTarget extends DatabaseConnection {
  /** The module that opens it in the thread (the host's `databaseThreads.module`). */
  module: string;
}

export interface WorkerWriterOptions {
  settings: WriteSettings;
  logger: Logger;
  /** Entries per postMessage: bounds each pause of the main thread (~1 µs an entry), so requests wait little behind it. */
  entriesPerPost?: number;
  /** How long `close` waits for the thread to close its database before terminating it (ms). */
  closeTimeoutMs?: number;
  /** The thread's module (tests only). */
  workerUrl?: string;
}

export type WriterMode = 'worker' | 'main-thread' | 'closed';

interface Job {
  id: number;
  /** The entries as enqueued (kept: resending or handing over needs them; the posted bytes were transferred). */
  batch: QueuedEntry[];
  emit: (event: WriterEvent) => void;
  resolve: () => void;
  /** Position of the first entry not yet stored (from the thread's events). */
  next: number;
  /** Positions reported as unusable (never resent). */
  bad: Set<number>;
  /** Already sent a second time after the thread died. */
  resent: boolean;
  /** Bumped at each (re)send: a posting loop of an earlier send stops. */
  sends: number;
}

const DEFAULT_WORKER_URL = new URL('./writer.worker.ts', import.meta.url).href;

export class WorkerWriter implements BatchWriter {
  private worker: Worker | undefined;
  private current: 'worker' | 'main-thread' = 'worker';
  private closing: Promise<void> | undefined;
  private readonly jobs = new Map<number, Job>();
  /** Replays in flight, by id. */
  private readonly replays = new Map<number, { resolve: (r: ReplayResult) => void; reject: (e: Error) => void }>();
  /** Completions of the batches handed to `write` and not finished yet (whichever writer finishes them). */
  private readonly pending = new Set<Promise<void>>();
  private nextId = 1;
  private closedAck: (() => void) | undefined;
  private exited: (() => void) | undefined;
  /** Times the thread was started again after dying. */
  restarts = 0;
  private priorityRefused = false;
  /** The running thread's kernel id (from its `ready`), whose priority this thread then sets itself. */
  private tid: number | undefined;
  /** The nice value last asked for: given to a thread that starts (again) after it was asked. */
  private nice: number | undefined;
  private readonly entriesPerPost: number;

  constructor(
    private readonly target: WorkerTarget,
    private readonly fallback: BatchWriter,
    private readonly o: WorkerWriterOptions,
  ) {
    this.entriesPerPost = Math.max(1, o.entriesPerPost ?? 50);
    this.start();
  }

  get mode(): WriterMode {
    return this.closing ? 'closed' : this.current;
  }

  /** The running thread's kernel id, once it said it is ready (Linux). */
  get threadId(): number | undefined {
    return this.worker ? this.tid : undefined;
  }

  /** Whether a writer thread is running (false after `close`, or once batches are written on the main thread). */
  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  /**
   * Journal records, inserted by the thread (ignoring rows stored already). Not resent if the thread dies: the
   * journal keeps them, and the queue replays them again.
   */
  replay(text: string): Promise<ReplayResult> {
    const worker = this.worker;
    if (this.current !== 'worker' || !worker || this.closing) return this.fallback.replay(text);
    return new Promise<ReplayResult>((resolve, reject) => {
      const id = this.nextId++;
      this.replays.set(id, { resolve, reject });
      this.updateRef();
      this.send(worker, { type: 'replay', id, text });
    });
  }

  /**
   * Runs the thread at this nice value (the queue raises it while behind); refusals are logged once. Set from here
   * once the thread's id is known: a message would wait until the thread has finished the batch it is writing, which
   * at nice 19 under full load can take seconds while the queue grows.
   */
  setPriority(nice: number): void {
    this.nice = nice;
    const worker = this.worker;
    if (!worker || this.closing) return;
    if (this.tid === undefined) this.send(worker, { type: 'priority', nice });
    else if (!setThreadPriority(nice, this.tid)) this.priorityWasRefused(nice);
  }

  private priorityWasRefused(nice: number): void {
    if (this.priorityRefused) return;
    this.priorityRefused = true;
    this.o.logger.warn(
      { nice },
      'request log writer thread: the system refused a higher CPU priority while the log is behind (needs CAP_SYS_NICE or ulimit -e); it keeps its priority',
    );
  }

  write(batch: QueuedEntry[], emit: (event: WriterEvent) => void): Promise<void> {
    if (this.current !== 'worker' || !this.worker || this.closing) return this.fallback.write(batch, emit);
    const done = new Promise<void>((resolve) => {
      const job: Job = { id: this.nextId++, batch, emit, resolve, next: 0, bad: new Set(), resent: false, sends: 0 };
      this.jobs.set(job.id, job);
      this.updateRef();
      void this.post(job);
    });
    this.pending.add(done);
    void done.then(() => this.pending.delete(done));
    return done;
  }

  /** Closes the thread's database, then terminates the thread. Batches still in flight are finished first. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const timeout = this.o.closeTimeoutMs ?? 5_000;
    worker.ref();
    // A batch still being posted (in parts) must be whole before the thread is told to close.
    await Promise.race([Promise.all(this.pending), Bun.sleep(timeout)]);
    if (this.worker !== worker) return; // it died meanwhile; its batches were taken over
    const closed = new Promise<void>((resolve) => (this.closedAck = resolve));
    this.send(worker, { type: 'close' });
    // Messages are handled in order: `closed` comes after the answers to every batch posted before.
    await Promise.race([closed, Bun.sleep(timeout)]);
    const exited = new Promise<void>((resolve) => (this.exited = resolve));
    worker.terminate();
    await Promise.race([exited, Bun.sleep(1_000)]);
    if (this.worker === worker) this.worker = undefined;
    // Anything the thread did not finish (it should have) is written here.
    for (const job of this.takeJobs()) this.handOver(job);
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(this.o.workerUrl ?? DEFAULT_WORKER_URL, { ref: false });
    } catch (err) {
      this.o.logger.error({ error: reason(err) }, 'request log writer thread could not start; writing on the main thread');
      this.current = 'main-thread';
      return;
    }
    this.worker = worker;
    this.tid = undefined;
    worker.addEventListener('message', (event: MessageEvent<FromWorker>) => {
      if (this.worker === worker) this.onMessage(event.data);
    });
    worker.addEventListener('messageerror', () => {
      this.o.logger.error({}, 'request log writer thread: a message could not be read');
    });
    worker.addEventListener('error', (event: ErrorEvent) => {
      this.o.logger.error({ error: { message: String(event.message).slice(0, 300) } }, 'request log writer thread error');
    });
    worker.addEventListener('close', () => this.onExit(worker));
    const { url, reader, module } = this.target;
    this.send(worker, { type: 'init', connection: { url, reader }, module, settings: this.o.settings });
  }

  private send(worker: Worker, message: ToWorker, transfer?: ArrayBuffer[]): void {
    if (transfer?.length) worker.postMessage(message, transfer);
    else worker.postMessage(message);
  }

  /** Posts a job's entries from `job.next` on, in parts, letting the main thread serve requests between parts. */
  private async post(job: Job): Promise<void> {
    const { batch } = job;
    const total = batch.length;
    const send = ++job.sends;
    const onBad = (seq: number, err: unknown) => {
      job.bad.add(seq);
      job.emit({ kind: 'bad-entry', error: reason(err), traceId: String(batch[seq]?.traceId ?? '').slice(0, 128), index: seq });
    };
    let from = 0;
    do {
      const worker = this.worker;
      // The thread died while parts were being posted: onExit has taken over the job (and may have sent it again).
      if (!worker || this.jobs.get(job.id) !== job || job.sends !== send) return;
      const to = Math.min(total, from + this.entriesPerPost);
      const last = to === total;
      try {
        const part = toWirePart(batch, from, to, this.o.settings.maxBodyBytes, onBad, (i) => i >= job.next && !job.bad.has(i));
        this.postPart(worker, job, part, last, total);
      } catch (err) {
        // Conversion failed for a reason not tied to one entry (should not happen): what is left is lost.
        this.lose(job, err);
        return;
      }
      from = to;
      if (!last) await yieldToEventLoop();
    } while (from < total);
  }

  private postPart(worker: Worker, job: Job, part: WirePart, last: boolean, total: number): void {
    try {
      this.send(worker, { type: 'write', id: job.id, last, total, ...part }, part.pack ? [part.pack.buffer as ArrayBuffer] : undefined);
    } catch (err) {
      // Strings, numbers and one buffer always clone; only a closing thread gets here.
      this.lose(job, err);
    }
  }

  private onMessage(message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        this.o.logger.debug({ restarts: this.restarts }, 'request log writer thread ready');
        this.tid = message.tid;
        if (this.nice !== undefined) this.setPriority(this.nice);
        return;
      case 'init-failed': {
        this.o.logger.warn({ error: message.error }, 'request log writer thread could not open the database; writing on the main thread');
        this.current = 'main-thread';
        const worker = this.worker;
        this.worker = undefined;
        worker?.terminate();
        for (const job of this.takeJobs()) this.handOver(job);
        return;
      }
      case 'event': {
        const job = this.jobs.get(message.id);
        if (!job) return;
        const event = message.event;
        if (event.kind === 'written') job.next = Math.max(job.next, event.next);
        else if (event.kind === 'bad-entry') job.bad.add(event.index);
        else if (event.kind === 'unwritten' || event.kind === 'lost') job.next = job.batch.length;
        job.emit(event);
        return;
      }
      case 'done':
      case 'failed': {
        const job = this.jobs.get(message.id);
        if (!job) return;
        if (message.type === 'failed') this.lose(job, undefined, message.error);
        else this.finish(job);
        return;
      }
      case 'replayed':
      case 'replay-failed': {
        const replay = this.replays.get(message.id);
        this.replays.delete(message.id);
        this.updateRef();
        if (message.type === 'replayed') replay?.resolve(message.result);
        else replay?.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
        return;
      }
      case 'priority-refused':
        this.priorityWasRefused(message.nice);
        return;
      case 'error':
        this.o.logger.error({ error: message.error }, 'request log writer thread error');
        return;
      case 'closed':
        this.closedAck?.();
        return;
    }
  }

  /** The thread ended. Expected during `close`; otherwise it died: start it again once, then write here. */
  private onExit(worker: Worker): void {
    if (this.worker !== worker) {
      if (this.closing) this.exited?.();
      return;
    }
    this.worker = undefined;
    const jobs = this.takeJobs();
    if (this.closing) {
      this.exited?.();
      for (const job of jobs) this.handOver(job);
      return;
    }
    const restart = this.restarts < 1;
    this.o.logger.error(
      { restarts: this.restarts, batchesInFlight: jobs.length },
      restart ? 'request log writer thread died; starting it again' : 'request log writer thread died again; writing on the main thread',
    );
    if (restart) {
      this.restarts++;
      this.start();
    } else this.current = 'main-thread';
    for (const job of jobs) {
      if (job.resent) {
        // It died twice with this batch in flight: the batch may be what kills it. Not tried on the main thread.
        this.lose(job, undefined, { message: 'the request log writer thread died twice while writing this batch' });
        continue;
      }
      // Sent once more (entries not yet stored): a batch is retried once, like a failed insert.
      job.resent = true;
      if (this.current === 'worker' && this.worker) {
        this.jobs.set(job.id, job);
        this.updateRef();
        void this.post(job);
      } else this.handOver(job);
    }
  }

  private takeJobs(): Job[] {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    // Replays in flight fail: their records stay in the journal and are replayed again.
    for (const replay of this.replays.values()) replay.reject(new Error('the request log writer thread stopped'));
    this.replays.clear();
    this.updateRef();
    return jobs;
  }

  /** Writes what is left of a job with the fallback writer (on the main thread). */
  private handOver(job: Job): void {
    const rest = job.batch.filter((_, i) => i >= job.next && !job.bad.has(i));
    if (rest.length === 0) {
      job.resolve();
      return;
    }
    this.fallback.write(rest, job.emit).then(job.resolve, (err: unknown) => {
      job.emit({ kind: 'lost', error: reason(err), dropped: rest.length });
      job.resolve();
    });
  }

  /** Counts what is left of a job as lost and finishes it. */
  private lose(job: Job, err: unknown, info?: ErrorInfo): void {
    let left = 0;
    for (let i = job.next; i < job.batch.length; i++) if (!job.bad.has(i)) left++;
    if (left > 0) job.emit({ kind: 'lost', error: info ?? reason(err), dropped: left });
    job.next = job.batch.length;
    this.finish(job);
  }

  private finish(job: Job): void {
    if (this.jobs.get(job.id) === job) this.jobs.delete(job.id);
    this.updateRef();
    job.resolve();
  }

  /** The thread keeps the process alive only while a batch is in flight (a pending flush must not be cut short). */
  private updateRef(): void {
    if (!this.worker) return;
    if (this.jobs.size > 0 || this.replays.size > 0 || this.closing) this.worker.ref();
    else this.worker.unref();
  }
}
