/**
 * One sink's queue: rows are added from a finally stage (a push, nothing else), sent in batches from a timer or
 * once a batch is full, one send at a time, retried with back-off. A full queue drops the row and counts it: a slow
 * or dead sink never holds a request, nor grows memory past `maxQueue` rows.
 */
import type { LogEntry } from '@gateway/plugin-request-log';
import type { Logger } from '@gateway/sdk';
import { exportRow, type ExportRow } from './row.ts';

export interface Sink {
  /** `webhook`, `otlp`, `s3`: the metrics label. */
  readonly name: string;
  /** Sends one batch; rejects (or throws) to have it retried. */
  send(rows: ExportRow[]): Promise<void>;
}

export interface BatcherOptions {
  batchSize: number;
  flushMs: number;
  maxQueue: number;
  /** Sends of one batch before it is dropped (the first included). */
  attempts: number;
  /** Back-off before the second send; doubled each time. */
  retryBaseMs: number;
  bodies: boolean;
}

export interface SinkStats {
  sent: number;
  droppedQueueFull: number;
  droppedFailed: number;
  retries: number;
}

export class Batcher {
  readonly stats: SinkStats = { sent: 0, droppedQueueFull: 0, droppedFailed: 0, retries: 0 };
  private queue: LogEntry[] = [];
  private sending: Promise<void> | undefined;
  private readonly timer: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(
    readonly sink: Sink,
    private readonly options: BatcherOptions,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), options.flushMs);
    this.timer.unref?.();
  }

  get queued(): number {
    return this.queue.length;
  }

  add(entry: LogEntry): void {
    if (this.closed || this.queue.length >= this.options.maxQueue) {
      this.stats.droppedQueueFull++;
      return;
    }
    this.queue.push(entry);
    if (this.queue.length >= this.options.batchSize && !this.sending) void this.flush();
  }

  /** Sends what is queued, batch after batch; resolves when the queue was empty once. */
  flush(): Promise<void> {
    if (this.sending) return this.sending;
    if (this.queue.length === 0) return Promise.resolve();
    this.sending = this.drain().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const entries = this.queue.splice(0, this.options.batchSize);
      const rows = entries.map((e) => exportRow(e, this.options.bodies));
      await this.sendWithRetries(rows);
    }
  }

  private async sendWithRetries(rows: ExportRow[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.sink.send(rows);
        this.stats.sent += rows.length;
        return;
      } catch (error) {
        if (attempt >= this.options.attempts || this.closed) {
          this.stats.droppedFailed += rows.length;
          this.logger.warn({ sink: this.sink.name, rows: rows.length, err: error instanceof Error ? error.message : String(error) }, 'log export: batch dropped');
          return;
        }
        this.stats.retries++;
        await Bun.sleep(this.options.retryBaseMs * 2 ** (attempt - 1));
      }
    }
  }

  /** At shutdown: one last flush (its retries cut short), then no more rows. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    await this.flush();
  }
}
