/**
 * Log exports run off the request path: POST /logs/exports stores the job and returns; this runner, in the process
 * that accepted it, reads the selected rows in batches (cursor order, newest first, as GET /logs pages) and appends
 * them to `<GATEWAY_EXPORTS_DIR>/<id>.<format>`, a batch at a time, then marks the job succeeded (with its row count)
 * or failed (with the reason). The caller's visibility is the one of the request that made the job. A process that
 * stops mid-export leaves the job `running` (its file incomplete): ask for a new export.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { requestLogs } from '@gateway/plugin-request-log';
import { and, type Database, desc, eq, type Logger } from '@gateway/sdk';
import { logExports } from '../tables.ts';
import { afterCursor, type LogCursor } from './cursor.ts';
import { type ExportFormat, ExportLines } from './export-format.ts';
import type { LogScope } from './filters.ts';
import { presentLog } from './present.ts';

export const DEFAULT_EXPORTS_DIR = './data/exports';
const BATCH = 1000;

export class LogExportRunner {
  readonly dir: string;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
    dir: string | undefined,
  ) {
    this.dir = resolve(dir?.trim() || DEFAULT_EXPORTS_DIR);
  }

  fileOf(id: string, format: ExportFormat): string {
    return join(this.dir, `${id}.${format}`);
  }

  /** Starts the job after the current request (never awaited by it). */
  start(id: string, format: ExportFormat, scope: LogScope): void {
    const job = new Promise<void>((done) => setTimeout(done, 0))
      .then(() => this.run(id, format, scope))
      .finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** Waits for the exports in progress (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  private async run(id: string, format: ExportFormat, scope: LogScope): Promise<void> {
    const file = this.fileOf(id, format);
    try {
      await this.database.update(logExports, { status: 'running' }, (c) => eq(c.id, id));
      await mkdir(this.dir, { recursive: true });
      const writer = Bun.file(file).writer();
      const lines = new ExportLines(format);
      let rows = 0;
      let cursor: LogCursor | undefined;
      try {
        for (;;) {
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
      await this.database.update(logExports, { status: 'succeeded', rows, completed_at: Date.now() }, (c) => eq(c.id, id));
    } catch (error) {
      const message = error instanceof Error ? error.message.slice(0, 500) : String(error);
      this.logger.warn({ exportId: id, error: message }, 'log export failed');
      await rm(file, { force: true }).catch(() => undefined);
      await this.database.update(logExports, { status: 'failed', error: message, completed_at: Date.now() }, (c) => eq(c.id, id)).catch(() => undefined);
    }
  }
}
