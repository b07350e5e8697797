/**
 * Periodic resets, made durable. The stage starts a limit's new period in memory the moment the clock passes its
 * reset (period.ts: every process computes the same period, so the counters restart everywhere at once); this brings
 * the row up to date: `period_start`, the next `next_usage_reset_at`, and `last_reset_at` (the boundary itself), then
 * sets `last_reset_at` on the API key, virtual key or integration the limit is set on. A reset is written by one
 * process only: the update is conditional on the period the row held. Run for a limit the stage finds due, and for
 * every limit on a timer (USAGE_LIMITS_RESET_INTERVAL_MS, default 60 s), so a limit nobody calls is reset too.
 */
import { apiKeys } from '@gateway/admin-api-keys';
import { integrations, virtualKeys } from '@gateway/admin-integrations';
import { limitsClock } from '@gateway/policy-kit';
import { and, type Database, eq, type Logger } from '@gateway/sdk';
import { periodAt } from './period.ts';
import type { LimitStore } from './store.ts';
import { type UsageLimitRow, usageLimits } from './table.ts';

export class Resets {
  private readonly running = new Map<string, Promise<void>>();
  private timer: Timer | undefined;

  constructor(
    private readonly database: Database,
    private readonly store: LimitStore,
    private readonly logger: Logger,
  ) {}

  /** A limit whose period the stage found over: brought up to date in the background (once at a time). */
  due(id: string): void {
    if (this.running.has(id)) return;
    const job = this.reset(id)
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ limit: id, err: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'usage limits: a reset could not be stored; retried later'))
      .finally(() => this.running.delete(id));
    this.running.set(id, job);
  }

  /** Every active limit whose reset has passed; resolves once they are stored. */
  async tick(): Promise<void> {
    const now = limitsClock.now();
    for (const entry of this.store.index.all) if (entry.policy.stored.end !== null && now >= entry.policy.stored.end) this.due(entry.policy.id);
    await Promise.all(this.running.values());
  }

  start(everyMs: number): void {
    if (everyMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.running.values());
  }

  /** Stores the limit's current period; true when this process wrote it. */
  async reset(id: string): Promise<boolean> {
    const [row] = await this.database.select(usageLimits, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (row?.status !== 'active' || row.next_usage_reset_at === null) return false;
    const period = periodAt(row, { start: row.period_start, end: row.next_usage_reset_at }, limitsClock.now());
    if (period.start === row.period_start) return false;
    const written = await this.database.update(
      usageLimits,
      { period_start: period.start, next_usage_reset_at: period.end, last_reset_at: period.start, last_updated_at: Date.now() },
      (c) => and(eq(c.id, id), eq(c.period_start, row.period_start)),
    );
    if (written === 0) return false; // another process did
    await this.markSubject(row, period.start);
    await this.store.changed();
    this.logger.info({ limit: id, kind: row.kind, periodStart: new Date(period.start).toISOString() }, 'usage limits: a new period started');
    return true;
  }

  /** `last_reset_at` of what the limit is set on (its table may be missing: that plugin is not loaded). */
  private async markSubject(row: UsageLimitRow, at: number): Promise<void> {
    if (!row.subject_id) return;
    const id = row.subject_id;
    try {
      if (row.kind === 'api_key') await this.database.update(apiKeys, { last_reset_at: at }, (c) => eq(c.id, id));
      else if (row.kind === 'virtual_key') await this.database.update(virtualKeys, { last_reset_at: at }, (c) => eq(c.id, id));
      else if (row.kind === 'integration_workspace') await this.database.update(integrations, { last_reset_at: at }, (c) => eq(c.id, id));
    } catch (error) {
      this.logger.warn({ limit: row.id, err: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'usage limits: last_reset_at of the limited object not set');
    }
  }
}
