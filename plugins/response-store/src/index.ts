/**
 * The response store (docs/responses.md, "Stored responses"): provides ResponseServices.store, which the core uses
 * to keep every Response the gateway produced and to serve GET /v1/responses/{id}, its input_items, DELETE and
 * previous_response_id. RESPONSES_RETENTION_DAYS (default 30) is how long a response is kept; expired rows are never
 * read and are swept hourly.
 */
import { definePlugin, GatewayError, ResponseServices, Services } from '@gateway/sdk';
import { DAY_MS, SqlResponseStore } from './store.ts';
import { responseStoreMigrations } from './tables.ts';

export { SqlResponseStore } from './store.ts';
export { responseStoreMigrations, storedResponses } from './tables.ts';

const SWEEP_EVERY_MS = 3_600_000;

/** RESPONSES_RETENTION_DAYS: a positive number of days (fractions allowed), default 30. */
export function retentionDays(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 30;
  const days = Number(value);
  if (!Number.isFinite(days) || days <= 0)
    throw new GatewayError({ code: 'invalid_setting', status: 500, message: `RESPONSES_RETENTION_DAYS must be a positive number of days, got ${JSON.stringify(value)}` });
  return days;
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(responseStoreMigrations);
    const store = new SqlResponseStore(database, retentionDays(api.env.RESPONSES_RETENTION_DAYS) * DAY_MS);
    api.provide(ResponseServices.store, store);
    const sweep = () => {
      store.sweep().catch((error) => api.logger.warn({ err: error }, 'sweeping expired stored responses failed'));
    };
    const timer = setInterval(sweep, SWEEP_EVERY_MS);
    timer.unref();
    api.onReady(sweep);
    api.onClose(() => clearInterval(timer));
  },
});
