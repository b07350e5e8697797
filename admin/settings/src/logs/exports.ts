/**
 * Log exports run off the request path: POST /logs/exports stores the job and returns; this runner, in the process
 * that accepted it, reads the selected rows in batches (cursor order, newest first, as GET /logs pages) and appends
 * them to `<GATEWAY_EXPORTS_DIR>/<id>.<format>`, a batch at a time, then marks the job succeeded (with its row count)
 * or failed (with the reason). The caller's visibility is the one of the request that made the job.
 *
 * Interrupted jobs are not resumed (the asking key's visibility is not known outside its request): while it writes,
 * the runner beats (`heartbeat_at`, every HEARTBEAT_MS); the sweep marks a pending or running job whose runner has
 * not beaten for STALE_MS `failed` with an `interrupted: …` error and removes its partial file. The sweep also
 * deletes finished exports (record and file) `retentionMs` after they finished, and files of the directory that no
 * export owns any more. Every process sweeps at start and on an unref'd timer; each step is idempotent (conditional
 * updates, deletes by id, `rm --force`), so processes sharing a database need no lease.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { requestLogs } from '@gateway/plugin-request-log';
import { and, type Columns, type Database, desc, eq, inArray, isNull, type Logger, lt, or } from '@gateway/sdk';
import { logExports } from '../tables.ts';
import { afterCursor, type LogCursor } from './cursor.ts';
import { type ExportFormat, ExportLines } from './export-format.ts';
import type { LogScope } from './filters.ts';
import { presentLog } from './present.ts';

type ExportColumns = Columns<(typeof logExports)['columns']>;

export const DEFAULT_EXPORTS_DIR = './data/exports';
const BATCH = 1000;
const HOUR_MS = 3_600_000;
/** How often a running export says it is alive. */
export const HEARTBEAT_MS = 30_000;
/** A pending or running job silent this long is interrupted (four missed beats). */
export const STALE_MS = 4 * HEARTBEAT_MS;
export const DEFAULT_RETENTION_HOURS = 168;
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** What an interrupted job's `error` says. */
export const INTERRUPTED =
  'interrupted: the process writing this export stopped (a restart or a crash) before it finished; ask for a new export';
/** An export's file: `<uuid>.<format>`; other files of the directory are never touched. */
const EXPORT_FILE = /^[0-9a-f-]{36}\.(jsonl|csv)$/;

export interface LogExportOptions {
  /** GATEWAY_EXPORTS_DIR. */
  dir?: string;
  /** Finished exports are deleted this long after they finished (LOG_EXPORTS_RETENTION_HOURS). */
  retentionMs?: number;
  /** The time; tests move it. */
  now?: () => number;
}

export interface SweepResult {
  /** Jobs marked failed as interrupted. */
  interrupted: number;
  /** Finished exports deleted (record and file). */
  expired: number;
  /** Files no export owns any more, deleted. */
  orphanFiles: number;
}

export class LogExportRunner {
  readonly dir: string;
  /** This process's runner: written on the jobs it takes. */
  readonly runnerId = crypto.randomUUID();
  readonly retentionMs: number;
  private readonly now: () => number;
  private readonly running = new Set<Promise<void>>();
  /** Jobs of this runner, by id, with their cancel flag (the export was deleted). */
  private readonly active = new Map<string, { cancelled: boolean }>();
  private timer: Timer | undefined;
  private sweeping: Promise<SweepResult> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    options: LogExportOptions = {},
  ) {
    this.dir = resolve(options.dir?.trim() || DEFAULT_EXPORTS_DIR);
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_HOURS * HOUR_MS;
    this.now = options.now ?? Date.now;
  }

  fileOf(id: string, format: ExportFormat): string {
    return join(this.dir, `${id}.${format}`);
  }

  /** Starts the job after the current request (never awaited by it). */
  start(id: string, format: ExportFormat, scope: LogScope): void {
    this.active.set(id, { cancelled: false });
    const job = new Promise<void>((done) => setTimeout(done, 0))
      .then(() => this.run(id, format, scope))
      .finally(() => {
        this.active.delete(id);
        this.running.delete(job);
      });
    this.running.add(job);
  }

  /** Waits for the exports in progress (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /**
   * Deletes an export: its record, its file, and its run when this process runs it (stopped after the batch being
   * written). A run in another process finds its record gone when it ends and removes its own file; a file left
   * behind is removed by a later sweep.
   */
  async remove(id: string, format: ExportFormat): Promise<void> {
    const run = this.active.get(id);
    if (run) run.cancelled = true;
    await this.database.delete(logExports, (c) => eq(c.id, id));
    await rm(this.fileOf(id, format), { force: true });
  }

  /** Sweeps now and then every `intervalMs`, without keeping the process alive. */
  startSweeping(intervalMs: number): void {
    if (this.timer) return;
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** Stops the sweeps and waits for the exports in progress. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
    await this.idle();
  }

  /** One sweep; a call during a sweep waits for it. Failures are logged and tried again at the next one. */
  sweep(): Promise<SweepResult> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => {
        this.logger.warn({ error: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'log export sweep failed; trying again at the next one');
        return { interrupted: 0, expired: 0, orphanFiles: 0 };
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const now = this.now();
    const stale = now - STALE_MS;
    const unfinished = ['pending', 'running'] as const;
    // Pending or running, and no beat since `stale` (a pending job never beat: its creation counts).
    const silent = (c: ExportColumns) =>
      and(inArray(c.status, [...unfinished]), or(lt(c.heartbeat_at, stale), and(isNull(c.heartbeat_at), lt(c.created_at, stale))));
    const stuck = await this.database.select(logExports, { where: silent, fresh: true });
    let interrupted = 0;
    for (const job of stuck) {
      if (this.active.has(job.id)) continue; // ours and alive
      // Conditional: a beat between the select and this update keeps the job running.
      const changed = await this.database.update(logExports, { status: 'failed', error: INTERRUPTED, completed_at: now }, (c) => and(eq(c.id, job.id), silent(c)));
      if (changed === 0) continue;
      interrupted++;
      await rm(this.fileOf(job.id, job.format), { force: true });
    }
    const cutoff = now - this.retentionMs;
    const old = await this.database.select(logExports, {
      where: (c) => and(inArray(c.status, ['succeeded', 'failed']), lt(c.completed_at, cutoff)),
      fresh: true,
    });
    for (const job of old) {
      await rm(this.fileOf(job.id, job.format), { force: true });
      await this.database.delete(logExports, (c) => eq(c.id, job.id));
    }
    const orphanFiles = await this.removeOrphanFiles(now);
    if (interrupted || old.length || orphanFiles) this.logger.info({ interrupted, expired: old.length, orphanFiles }, 'log export sweep');
    return { interrupted, expired: old.length, orphanFiles };
  }

  /**
   * Files older than the retention (plus the stale margin) that no export record names: left by a process whose
   * export was deleted while it ran, or by a database restored from before their export. Files of live exports are
   * newer than that or still named by their record.
   */
  private async removeOrphanFiles(now: number): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => EXPORT_FILE.test(name));
    } catch {
      return 0; // no directory yet: nothing exported here
    }
    let removed = 0;
    for (const name of names) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (!info || info.mtimeMs >= now - this.retentionMs - STALE_MS) continue;
      const id = name.slice(0, name.lastIndexOf('.'));
      if ((await this.database.count(logExports, (c) => eq(c.id, id), { fresh: true })) > 0) continue;
      await rm(path, { force: true });
      removed++;
    }
    return removed;
  }

  private async run(id: string, format: ExportFormat, scope: LogScope): Promise<void> {
    const file = this.fileOf(id, format);
    const beat = () => this.database.update(logExports, { heartbeat_at: this.now() }, (c) => and(eq(c.id, id), eq(c.runner_id, this.runnerId)));
    const heartbeat = setInterval(() => void beat().catch(() => undefined), HEARTBEAT_MS);
    heartbeat.unref();
    const cancelled = () => this.active.get(id)?.cancelled === true;
    try {
      const taken = await this.database.update(logExports, { status: 'running', runner_id: this.runnerId, heartbeat_at: this.now() }, (c) =>
        and(eq(c.id, id), eq(c.status, 'pending')),
      );
      if (taken === 0) return; // deleted (or swept) before it started
      await mkdir(this.dir, { recursive: true });
      const writer = Bun.file(file).writer();
      const lines = new ExportLines(format);
      let rows = 0;
      let cursor: LogCursor | undefined;
      try {
        while (!cancelled()) {
          const at = cursor;
          const batch = scope.none
            ? []
            : await this.database.select(requestLogs, {
                where: (c) => and(scope.where(c), at ? afterCursor(c, at) : undefined),
                orderBy: (c) => [desc(c.created_at), desc(c.id)],
                limit: BATCH,
              });
          if (batch.length === 0) break;
          writer.write(lines.lines(batch.map((row) => presentLog(row, { metadataVisible: scope.metadataVisible(row), detail: false }))));
          await writer.flush();
          rows += batch.length;
          const last = batch.at(-1)!;
          cursor = { createdAt: last.created_at, id: last.id };
          if (batch.length < BATCH) break;
        }
      } finally {
        await writer.end();
      }
      // Only our running job is finished: a job deleted or marked interrupted meanwhile keeps what it says.
      const finished = cancelled()
        ? 0
        : await this.database.update(logExports, { status: 'succeeded', rows, completed_at: this.now() }, (c) =>
            and(eq(c.id, id), eq(c.status, 'running'), eq(c.runner_id, this.runnerId)),
          );
      if (finished === 0) await rm(file, { force: true });
    } catch (error) {
      const message = error instanceof Error ? error.message.slice(0, 500) : String(error);
      this.logger.warn({ exportId: id, error: message }, 'log export failed');
      await rm(file, { force: true }).catch(() => undefined);
      await this.database.update(logExports, { status: 'failed', error: message, completed_at: this.now() }, (c) => eq(c.id, id)).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }
}

/** LOG_EXPORTS_RETENTION_HOURS (default 168: a week) and LOG_EXPORTS_SWEEP_INTERVAL_MS (default a minute). */
export function exportOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): LogExportOptions & { sweepIntervalMs: number } {
  const positive = (name: string, fallback: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got ${JSON.stringify(raw.slice(0, 50))})`);
    return n;
  };
  return {
    dir: env.GATEWAY_EXPORTS_DIR,
    retentionMs: positive('LOG_EXPORTS_RETENTION_HOURS', DEFAULT_RETENTION_HOURS) * HOUR_MS,
    sweepIntervalMs: Math.round(positive('LOG_EXPORTS_SWEEP_INTERVAL_MS', DEFAULT_SWEEP_INTERVAL_MS)),
  };
}
