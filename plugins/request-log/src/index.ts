/**
 * The request log: a `finally` stage turns each finished request into a queued entry; the queue writes batches to
 * `request_logs`. Provides `requestLogs` (the LogQueue) so that tests and shutdown can flush it.
 */
import { definePlugin, type Database } from '@gateway/sdk';
import { entryFrom } from './entry.ts';
import { LogQueue } from './queue.ts';
import { requestLogMigrations } from './table.ts';

export { entryFrom, type LogEntry } from './entry.ts';
export { LogQueue, type LogQueueOptions, type LogQueueStats } from './queue.ts';
export { requestLogMigrations, requestLogs } from './table.ts';
export { extractUsage, type Usage } from './usage.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service<Database>('database');
    await database.migrate(requestLogMigrations);
    const queue = new LogQueue(database, { logger: api.logger });
    api.provide('requestLogs', queue);
    api.stage({
      name: 'request-log',
      phase: 'finally',
      rule: 'fire-and-forget',
      run: (req, outcome) => queue.enqueue(entryFrom(req, outcome)),
    });
    api.onClose(() => queue.flush());
  },
});
