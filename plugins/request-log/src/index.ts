/**
 * The request log: a `finally` stage turns each finished request into a queued entry; the queue writes batches to
 * `request_logs` from a writer thread with its own connection (DATABASE_URL), or on the main thread when no thread
 * can reach the same database (`sqlite::memory:`, or a `database` service that is not the one DATABASE_URL names).
 * While `req.body` is still the object parsed from the bytes received (`req.parsedBody`), an unchanged body is
 * logged from those bytes (cheap to hand to the thread). Provides `RequestLogServices.queue` (the LogQueue) so that
 * tests and shutdown can flush it.
 */
import {
  type Database,
  type DatabaseConnection,
  type DatabaseThreads,
  defineService,
  definePlugin,
  type Logger,
  type PluginApi,
  Services,
} from '@gateway/sdk';
import { bodyCompressionFromEnv } from './body-compression.ts';
import { durabilityFromEnv } from './durability-settings.ts';
import { entryFrom, HOOK_RESULTS_SETTLED_LOCAL } from './entry.ts';
import { Journal } from './journal.ts';
import { isMemoryUrl, LogQueue } from './queue.ts';
import { LogRetention, retentionFromEnv } from './retention.ts';
import { requestLogStatus } from './status.ts';
import { requestLogMigrations } from './table.ts';
import type { WorkerTarget } from './worker-writer.ts';

export { bodyIsRaw, entryFrom, HOOK_RESULTS_LOCAL, HOOK_RESULTS_SETTLED_LOCAL, type LogEntry } from './entry.ts';
export { isMemoryUrl, LogQueue, type LogPipelineHealth, type LogQueueOptions, type LogQueueStats, type LogWriterInfo } from './queue.ts';
export { Journal } from './journal.ts';
export { durabilityFromEnv } from './durability-settings.ts';
export { readStoredBody } from './body-compression.ts';
export { LogRetention, type RetentionOptions, type RetentionRound, retentionFromEnv } from './retention.ts';
export { requestLogJobs, requestLogMigrations, requestLogs } from './table.ts';

/** How long shutdown waits for hooks still running (their checks time out after 10 s by default) before writing. */
const HOOK_WAIT_AT_CLOSE_MS = 5_000;

/** DATABASE_URL and the reader from the `settings` service, else from the environment (as the host reads it). */
function databaseTarget(api: PluginApi, threads: DatabaseThreads): DatabaseConnection {
  // No settings service (a test harness, an embedding): the environment says.
  const settings = api.optional(Services.settings);
  if (settings?.databaseUrl) return { url: settings.databaseUrl, reader: settings.reader ?? undefined };
  return threads.fromEnv(api.env);
}

/**
 * The writer thread's target, or undefined (with the reason logged) when it must write on the main thread: the
 * thread opens its own connection, which must reach the `database` service's database (the host's
 * `databaseThreads.mismatch` says whether it does).
 */
function workerTarget(api: PluginApi, database: Database, logger: Logger): WorkerTarget | undefined {
  const threads = api.optional(Services.databaseThreads);
  if (!threads) {
    logger.debug({ reason: 'no databaseThreads service' }, 'request log written on the main thread');
    return undefined;
  }
  const target = databaseTarget(api, threads);
  const why = threads.mismatch(target, database);
  if (why === undefined) return { ...target, module: threads.module };
  // In memory: expected (tests); otherwise a configuration that would have sent logs elsewhere.
  if (isMemoryUrl(target.url)) logger.debug({ reason: why }, 'request log written on the main thread');
  else logger.warn({ reason: why }, 'request log written on the main thread');
  return undefined;
}

/** The services of this plugin. */
export const RequestLogServices = {
  /** The queue of log rows (tests flush it). */
  queue: defineService<LogQueue>('requestLogs'),
  /** Log retention (LOG_RETENTION_DAYS); absent when rows are kept forever. Tests call `round()`. */
  retention: defineService<LogRetention>('requestLogRetention'),
} as const;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    // Before any traffic, on this thread: the writer thread only inserts.
    await database.migrate(requestLogMigrations);
    const threads = api.optional(Services.databaseThreads);
    const url = threads ? databaseTarget(api, threads).url : (api.optional(Services.settings)?.databaseUrl ?? api.env.DATABASE_URL ?? '');
    // Malformed bounds stop the start (thrown): how much may be lost must not be guessed.
    const durability = durabilityFromEnv(api.env, url);
    // Claimed before any traffic (sync I/O at start only); what an earlier process left is replayed.
    const journal = durability.journal && Journal.open(durability.journal.dir, durability.journal);
    const queue = new LogQueue(database, {
      logger: api.logger,
      worker: workerTarget(api, database, api.logger),
      maxBytes: durability.queueMaxBytes,
      journal,
      writerNice: durability.writerNice,
      bodyCompression: bodyCompressionFromEnv(api.env),
    });
    api.provide(RequestLogServices.queue, queue);
    api.provide(Services.requestLogStatus, requestLogStatus(queue));
    // A malformed setting turns retention off (logged), never the request log, and never deletes by a guess.
    let retentionSettings: ReturnType<typeof retentionFromEnv>;
    try {
      retentionSettings = retentionFromEnv(api.env);
    } catch (error) {
      api.logger.error({ error: (error as Error).message }, 'log retention is off: its settings are malformed; rows are kept');
    }
    const retention = retentionSettings && new LogRetention(database, api.logger, retentionSettings);
    if (retention && retentionSettings) {
      api.provide(RequestLogServices.retention, retention);
      retention.start(retentionSettings.intervalMs);
    }
    // Requests whose hooks are still running (async hooks, a stream's guardrails): their row waits for the results.
    type Waiting = { write(): void; settled: Promise<void> };
    const waiting = new Set<Waiting>();
    api.stage({
      name: 'request-log',
      phase: 'finally',
      rule: 'fire-and-forget',
      run: (req, outcome) => {
        const settled = req.locals[HOOK_RESULTS_SETTLED_LOCAL];
        if (!(settled instanceof Promise)) return void queue.enqueue(entryFrom(req, outcome));
        let written = false;
        const item: Waiting = {
          settled: settled.then(() => item.write(), () => item.write()),
          write() {
            if (written) return;
            written = true;
            waiting.delete(item);
            queue.enqueue(entryFrom(req, outcome));
          },
        };
        waiting.add(item);
      },
    });
    api.onClose(async () => {
      await retention?.stop();
      // At shutdown the rows still waiting get a moment for their hooks, then are written with what is known.
      if (waiting.size) await Promise.race([Promise.all([...waiting].map((w) => w.settled)), Bun.sleep(HOOK_WAIT_AT_CLOSE_MS)]);
      for (const item of [...waiting]) item.write();
      await queue.close();
    });
  },
});
