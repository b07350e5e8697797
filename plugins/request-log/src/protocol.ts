/** Messages between the queue (main thread) and the writer thread (writer.worker.ts). */
import type { DatabaseConnection } from '@gateway/sdk';
import type { WirePart } from './wire.ts';
import type { ErrorInfo, ReplayResult, WriterEvent, WriteSettings } from './writer.ts';

export type ToWorker =
  /** First message: open the database (the writer thread's own connection) with `openDatabase` of `module`. */
  | { type: 'init'; connection: DatabaseConnection; module: string; settings: WriteSettings }
  /** One part of batch `id` (see wire.ts); the batch is written when its `last` part arrives (`total`: entries in the batch). */
  | ({ type: 'write'; id: number; last: boolean; total: number } & WirePart)
  /** Journal records to insert, ignoring rows stored already; answered with `replayed` or `replay-failed`. */
  | { type: 'replay'; id: number; text: string }
  /** The thread's CPU priority (nice), where its thread id is unknown (else the main thread sets it itself). */
  | { type: 'priority'; nice: number }
  /** Close the database; answered with `closed`. */
  | { type: 'close' };

export type FromWorker =
  /** The database is open; `tid`: the thread's kernel id, so the main thread can set its priority directly. */
  | { type: 'ready'; tid?: number }
  /** The database could not be opened: the queue writes on the main thread instead. */
  | { type: 'init-failed'; error: ErrorInfo }
  /** Progress of batch `id` (indices are positions in the batch). */
  | { type: 'event'; id: number; event: WriterEvent }
  /** Batch `id` is finished (written, or dropped as its events said). */
  | { type: 'done'; id: number }
  /** Batch `id` failed outside the database (a bug); what its events did not report is lost. */
  | { type: 'failed'; id: number; error: ErrorInfo }
  /** An error outside any batch (caught in the writer thread, which goes on). */
  | { type: 'error'; error: ErrorInfo }
  | { type: 'replayed'; id: number; result: ReplayResult }
  /** The system refused the priority (raising it needs CAP_SYS_NICE or RLIMIT_NICE). */
  | { type: 'priority-refused'; nice: number }
  | { type: 'replay-failed'; id: number; error: ErrorInfo }
  | { type: 'closed' };
