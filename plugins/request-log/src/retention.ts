/**
 * Log retention (LOG_RETENTION_DAYS): rows of `request_logs` older than N days are deleted in batches on an unref'd
 * timer, never on the request path. Every process runs the timer; one of them holds the job's lease (a conditional
 * UPDATE on its row in `request_log_jobs`, as the API-key rotation claims its work), so when several processes share
 * a database only one deletes. A lease outlives a crashed holder by `leaseMs` at most, then another process takes it.
 * Each batch is a select of the oldest ids then a delete of those ids: the same two statements on SQLite and MySQL,
 * and a short lock each, so the writer's inserts go on between batches.
 */
import { and, asc, type Database, eq, inArray, type Logger, lt, or } from '@gateway/sdk';
import { requestLogJobs, requestLogs } from './table.ts';

const DAY_MS = 86_400_000;
const JOB = 'retention';
const MAX_BATCH = 10_000;

export interface RetentionOptions {
  /** Rows older than this many days are deleted. */
  days: number;
  /** Rows per delete. Default 1000. */
  batchSize?: number;
  /** Batches per round at most, so one round ends even while rows arrive faster than they age. Default 100. */
  maxBatches?: number;
  /** How long a holder keeps the job after its last round began. Default 10 minutes. */
  leaseMs?: number;
  /** The time; tests move it. */
  now?: () => number;
}

export interface RetentionRound {
  /** false: another process holds the job. */
  claimed: boolean;
  /** Rows this process deleted in the round. */
  deleted: number;
  batches: number;
}

export class LogRetention {
  readonly owner = crypto.randomUUID();
  private timer: Timer | undefined;
  private running: Promise<RetentionRound> | undefined;
  private readonly o: Required<RetentionOptions>;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    options: RetentionOptions,
  ) {
    this.o = { batchSize: 1000, maxBatches: 100, leaseMs: 600_000, now: Date.now, ...options };
  }

  /** Runs a round every `intervalMs` without keeping the process alive. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.round(), intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One round; a call during a round waits for that round. Failures are logged and tried again next round. */
  round(): Promise<RetentionRound> {
    this.running ??= this.run()
      .catch((error: unknown) => {
        this.logger.warn({ error: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'log retention failed; trying again at the next round');
        return { claimed: false, deleted: 0, batches: 0 };
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<RetentionRound> {
    const now = this.o.now();
    if (!(await this.claim(now))) return { claimed: false, deleted: 0, batches: 0 };
    const cutoff = now - this.o.days * DAY_MS;
    let deleted = 0;
    let batches = 0;
    while (batches < this.o.maxBatches) {
      const ids = (
        await this.database.select(requestLogs, {
          where: (c) => lt(c.created_at, cutoff),
          orderBy: (c) => [asc(c.created_at)],
          limit: this.o.batchSize,
          fresh: true,
        })
      ).map((row) => row.id);
      if (ids.length === 0) break;
      deleted += await this.database.delete(requestLogs, (c) => inArray(c.id, ids));
      batches++;
      if (ids.length < this.o.batchSize) break;
    }
    if (deleted > 0) this.logger.info({ deleted, batches, olderThanDays: this.o.days }, 'log retention deleted old request logs');
    return { claimed: true, deleted, batches };
  }

  /** Takes or renews the lease: the row is ours when its lease ran out or we hold it already. */
  private async claim(now: number): Promise<boolean> {
    await this.database.insert(requestLogJobs, { name: JOB, owner: null, lease_until: 0 }, { ignoreDuplicates: true });
    const won = await this.database.update(requestLogJobs, { owner: this.owner, lease_until: now + this.o.leaseMs }, (c) =>
      and(eq(c.name, JOB), or(lt(c.lease_until, now), eq(c.owner, this.owner))),
    );
    return won > 0;
  }
}

/** LOG_RETENTION_DAYS and its companions; undefined when retention is off (unset or empty: rows are kept forever). */
export function retentionFromEnv(env: Record<string, string | undefined>): (RetentionOptions & { intervalMs: number }) | undefined {
  const raw = env.LOG_RETENTION_DAYS?.trim();
  if (!raw) return undefined;
  const positive = (name: string, value: string | undefined, fallback: number, integer: boolean, max = Number.MAX_SAFE_INTEGER) => {
    if (value === undefined || value.trim() === '') return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || n > max || (integer && !Number.isInteger(n)))
      throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'} up to ${max} (got ${JSON.stringify(value.slice(0, 50))})`);
    return n;
  };
  return {
    days: positive('LOG_RETENTION_DAYS', raw, 0, false),
    // The ids of a batch are one IN list: kept well under SQLite's parameter limit.
    batchSize: positive('LOG_RETENTION_BATCH_SIZE', env.LOG_RETENTION_BATCH_SIZE, 1000, true, MAX_BATCH),
    intervalMs: positive('LOG_RETENTION_INTERVAL_MS', env.LOG_RETENTION_INTERVAL_MS, 60_000, true),
  };
}
