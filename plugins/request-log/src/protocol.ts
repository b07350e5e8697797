/** Messages between the queue (main thread) and the writer thread (writer.worker.ts). */
import type { ReaderOptions } from '@gateway/db';
import type { WireEntry } from './wire.ts';
import type { ErrorInfo, WriterEvent, WriteSettings } from './writer.ts';

export type ToWorker =
  /** First message: open the database (the writer thread's own connection). */
  | { type: 'init'; url: string; reader?: ReaderOptions; settings: WriteSettings }
  /** One part of batch `id`; the batch is written when its `last` part arrives (`total`: entries in the batch). */
  | { type: 'write'; id: number; entries: WireEntry[]; pack: Uint8Array | null; last: boolean; total: number }
  /**
   * The same with the entries as one JSON text, their response bodies left out of it and sent joined in one string
   * with their lengths (JSON-escaping the bodies was the main thread's largest cost of logging).
   */
  | {
      type: 'write-json';
      id: number;
      json: string;
      bodies: string;
      bodyLengths: number[];
      pack: Uint8Array | null;
      last: boolean;
      total: number;
    }
  /** Close the database; answered with `closed`. */
  | { type: 'close' };

export type FromWorker =
  | { type: 'ready' }
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
  | { type: 'closed' };
