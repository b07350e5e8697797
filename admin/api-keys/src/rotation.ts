/**
 * Scheduled work on keys (service `apiKeyRotation`): rotate keys whose next_rotation_at has passed, send the
 * upcoming-rotation and expiry e-mails once each, and forget previous secrets whose transition is over. Every
 * process runs it on an unref'd timer; each rotation and each e-mail is claimed by a conditional UPDATE, so with
 * several processes exactly one of them does it. Tests move `clock` and call `tick()`.
 */
import { and, asc, eq, gt, isNotNull, isNull, lte, ne, or, type Database, type Logger } from '@gateway/sdk';
import type { ApiKeyClock } from './clock.ts';
import type { KeyNotices } from './notices.ts';
import { DAY_MS } from './policy.ts';
import type { ApiKeyStore } from './store.ts';
import { apiKeys, type ApiKeyRow } from './tables.ts';

export interface RotationOptions {
  /** How long before next_rotation_at the upcoming-rotation e-mail goes (at most half the period). Default 7 days. */
  rotationNoticeMs?: number;
  /** How long before expires_at the expiry warning goes. Default 7 days. */
  expiryNoticeMs?: number;
  /** Keys handled per kind of work and tick. */
  batch?: number;
}

export interface TickReport {
  /** Ids of the keys this process rotated. */
  rotated: string[];
  upcomingNotices: string[];
  expiryNotices: string[];
  /** Ids whose rotation or e-mail failed (logged); tried again at a later tick. */
  failed: string[];
}

export interface RotationDeps {
  database: Database;
  keys: ApiKeyStore;
  notices: KeyNotices;
  clock: ApiKeyClock;
  logger: Logger;
}

const message = (error: unknown) => (error instanceof Error ? error.message.slice(0, 300) : String(error));

export class RotationScheduler {
  private running: Promise<TickReport> | undefined;
  private timer: Timer | undefined;
  private readonly o: Required<RotationOptions>;

  constructor(
    private readonly d: RotationDeps,
    options: RotationOptions = {},
  ) {
    this.o = {
      rotationNoticeMs: options.rotationNoticeMs ?? 7 * DAY_MS,
      expiryNoticeMs: options.expiryNoticeMs ?? 7 * DAY_MS,
      batch: options.batch ?? 200,
    };
  }

  get clock(): ApiKeyClock {
    return this.d.clock;
  }

  /** Runs every `intervalMs` (0: never), without keeping the process alive. */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.tick().catch((error: unknown) => this.d.logger.warn({ error: message(error) }, 'scheduled API key work failed; trying again at the next tick'));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round of the work; a call during a round waits for that round. */
  tick(): Promise<TickReport> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<TickReport> {
    const report: TickReport = { rotated: [], upcomingNotices: [], expiryNotices: [], failed: [] };
    await this.rotateDue(report);
    await this.announceRotations(report);
    await this.warnExpiries(report);
    await this.forgetPreviousSecrets();
    await this.d.notices.flush();
    return report;
  }

  private async rotateDue(report: TickReport): Promise<void> {
    const now = this.d.clock.now();
    const due = await this.d.database.select(apiKeys, {
      where: (c) => and(eq(c.status, 'active'), isNotNull(c.next_rotation_at), lte(c.next_rotation_at, now), or(isNull(c.expires_at), gt(c.expires_at, now))),
      orderBy: (c) => [asc(c.next_rotation_at)],
      limit: this.o.batch,
      fresh: true,
    });
    for (const key of due) {
      try {
        const rotated = await this.d.keys.rotate(key, { scheduled: true });
        if (!rotated) continue; // another process claimed it
        report.rotated.push(key.id);
        this.d.logger.info({ apiKeyId: key.id, nextRotationAt: rotated.row.next_rotation_at }, 'rotated an API key by its rotation policy');
        this.d.notices.inBackground(() => this.d.notices.rotationCompleted(rotated.row, true));
      } catch (error) {
        report.failed.push(key.id);
        this.d.logger.error({ apiKeyId: key.id, error: message(error) }, 'could not rotate an API key by its rotation policy');
      }
    }
  }

  /** The upcoming-rotation e-mail, once per next_rotation_at, at most half a period ahead. */
  private async announceRotations(report: TickReport): Promise<void> {
    const now = this.d.clock.now();
    const horizon = now + this.o.rotationNoticeMs;
    const keys = await this.d.database.select(apiKeys, {
      where: (c) =>
        and(
          eq(c.status, 'active'),
          isNotNull(c.next_rotation_at),
          gt(c.next_rotation_at, now),
          lte(c.next_rotation_at, horizon),
          or(isNull(c.rotation_notice_for), ne(c.rotation_notice_for, c.next_rotation_at)),
        ),
      limit: this.o.batch,
      fresh: true,
    });
    for (const key of keys) {
      const due = key.next_rotation_at ?? 0;
      const lead = Math.min(this.o.rotationNoticeMs, ((key.rotation_period_days ?? 0) * DAY_MS) / 2);
      if (due - lead > now) continue;
      if (key.expires_at !== null && key.expires_at <= due) continue; // it expires first: no rotation to announce
      await this.claimAndSend(key, 'rotation_notice_for', due, () => this.d.notices.upcomingRotation(key), report.upcomingNotices, report);
    }
  }

  /** The expiry warning, once per expires_at. */
  private async warnExpiries(report: TickReport): Promise<void> {
    const now = this.d.clock.now();
    const keys = await this.d.database.select(apiKeys, {
      where: (c) =>
        and(
          eq(c.status, 'active'),
          isNotNull(c.expires_at),
          gt(c.expires_at, now),
          lte(c.expires_at, now + this.o.expiryNoticeMs),
          or(isNull(c.expiry_notice_for), ne(c.expiry_notice_for, c.expires_at)),
        ),
      limit: this.o.batch,
      fresh: true,
    });
    for (const key of keys)
      await this.claimAndSend(key, 'expiry_notice_for', key.expires_at ?? 0, () => this.d.notices.expiryWarning(key), report.expiryNotices, report);
  }

  /**
   * Marks the e-mail sent (only one process matches the update), then sends it; a failed send is unmarked so a
   * later tick tries again.
   */
  private async claimAndSend(
    key: ApiKeyRow,
    column: 'rotation_notice_for' | 'expiry_notice_for',
    value: number,
    send: () => Promise<boolean>,
    sent: string[],
    report: TickReport,
  ): Promise<void> {
    const previous = key[column];
    const watched = column === 'rotation_notice_for' ? 'next_rotation_at' : 'expires_at';
    const claimed = await this.d.database.update(apiKeys, { [column]: value }, (c) =>
      and(eq(c.id, key.id), eq(c[watched], value), previous === null ? isNull(c[column]) : eq(c[column], previous)),
    );
    if (claimed === 0) return;
    try {
      if (await send()) sent.push(key.id);
    } catch (error) {
      report.failed.push(key.id);
      this.d.logger.warn({ apiKeyId: key.id, error: message(error) }, 'could not send an API key e-mail; trying again at the next tick');
      await this.d.database
        .update(apiKeys, { [column]: previous }, (c) => and(eq(c.id, key.id), eq(c[column], value)))
        .catch((e: unknown) => this.d.logger.warn({ apiKeyId: key.id, error: message(e) }, 'could not unmark an unsent API key e-mail'));
    }
  }

  /** Previous secrets past their transition: the verifier already refuses them; the columns are cleared. */
  private async forgetPreviousSecrets(): Promise<void> {
    const now = this.d.clock.now();
    await this.d.database.update(apiKeys, { previous_hash: null, previous_expires_at: null }, (c) => and(isNotNull(c.previous_hash), lte(c.previous_expires_at, now)));
  }
}
