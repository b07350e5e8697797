/**
 * The helpers in HADR mode. The writer pool's gate throws the 503 from inside drizzle, which wraps it; the
 * helpers hand the 503 itself to their caller. A `fresh` read whose writer fails under it is answered by the
 * reader replica (stale by the replication lag, which beats failing a read).
 */
import type { DatabaseHelpers } from '@gateway/sdk';
import type { Helpers } from './helpers.ts';
import { writerUnavailableIn } from './writer-health.ts';

const unwrap = (err: unknown): unknown => writerUnavailableIn(err) ?? err;

export function guardHelpers(h: Helpers, hasReader: boolean): Helpers {
  const insert: DatabaseHelpers['insert'] = (table, rows, options) => h.insert(table, rows, options).catch((err: unknown) => Promise.reject(unwrap(err)));
  const update: DatabaseHelpers['update'] = (table, values, where) => h.update(table, values, where).catch((err: unknown) => Promise.reject(unwrap(err)));
  const remove: DatabaseHelpers['delete'] = (table, where) => h.delete(table, where).catch((err: unknown) => Promise.reject(unwrap(err)));

  /** A read failed with the 503: once more from the reader when it asked for the writer and there is a reader. */
  const retry = <T>(err: unknown, fresh: boolean | undefined, again: () => Promise<T>): Promise<T> => {
    const unavailable = writerUnavailableIn(err);
    if (unavailable && fresh && hasReader) return again();
    return Promise.reject(unavailable ?? err);
  };
  const select: DatabaseHelpers['select'] = (table, options = {}) =>
    h.select(table, options).catch((err: unknown) => retry(err, options.fresh, () => h.select(table, { ...options, fresh: false })));
  const findOne: DatabaseHelpers['findOne'] = (table, column, value, options = {}) =>
    h.findOne(table, column, value, options).catch((err: unknown) => retry(err, options.fresh, () => h.findOne(table, column, value, { ...options, fresh: false })));
  const count: DatabaseHelpers['count'] = (table, where, options = {}) =>
    h.count(table, where, options).catch((err: unknown) => retry(err, options.fresh, () => h.count(table, where, { ...options, fresh: false })));

  return { dialect: h.dialect, insert, update, delete: remove, select, findOne, count };
}
