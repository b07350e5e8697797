/**
 * An entry as the queue holds it: the log entry plus the id its row will have. The id is given at enqueue, before
 * any write is tried, so that an entry written once, then journaled because the write's answer was lost, then
 * replayed, is still one row (the replay inserts with "ignore duplicates"). A UUIDv7 is time-ordered: InnoDB, which
 * clusters rows by primary key, appends instead of splitting pages at random (see docs/performance.md).
 */
import type { LogEntry } from './entry.ts';

export type QueuedEntry = LogEntry & {
  rowId: string;
  /**
   * Its share of the queue's byte budget (estimatedBytes), set by the queue. A field rather than a WeakMap beside the
   * queue: a WeakMap entry per request cost a hash insert and, with thousands queued, work for every collection.
   */
  queuedBytes?: number;
};

/** Gives the entry its row id (in place: no copy on the request path). */
export function withRowId(entry: LogEntry): QueuedEntry {
  const queued = entry as QueuedEntry;
  queued.rowId ??= Bun.randomUUIDv7();
  return queued;
}

/** Fixed part of an entry's estimated size: its object, strings of ids and names, attempts, metadata. */
const ENTRY_OVERHEAD_BYTES = 1024;
/** A request body that a stage replaced with an object is not serialised to be measured: this is its guess. */
const OBJECT_BODY_GUESS_BYTES = 4096;

/**
 * The memory an entry holds, roughly, without serialising anything (O(1)): its bodies' lengths and a fixed part.
 * The queue is bounded by the sum of these (LOG_QUEUE_MAX_BYTES).
 */
export function estimatedBytes(entry: LogEntry): number {
  const body = entry.requestBody;
  let bytes = ENTRY_OVERHEAD_BYTES + (entry.responseBody?.length ?? 0) + (entry.errorMessage?.length ?? 0);
  if (body instanceof Uint8Array) bytes += body.byteLength;
  else if (typeof body === 'string') bytes += body.length;
  else if (body != null) bytes += OBJECT_BODY_GUESS_BYTES;
  return bytes;
}
