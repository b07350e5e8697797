/**
 * The request-log writer thread: its own database connection, `toRow` and the INSERTs, off the main thread. It
 * handles one message at a time, in order. Nothing it does may end the thread: every error is caught and reported
 * to the main thread as a message.
 */
import type { Database, DatabaseConnection } from '@gateway/sdk';
import type { FromWorker, ToWorker } from './protocol.ts';
import { requestLogs } from './table.ts';
import { fromWirePart } from './wire.ts';
import { reason, replayText, writeEntries, type WriterEvent, type WriteSettings } from './writer.ts';
import type { QueuedEntry } from './queued.ts';
import { currentThreadId, lowerThreadPriority, setThreadPriority } from './low-priority.ts';
import { mysqlLogInsert } from './mysql-insert.ts';
import type { InsertRows } from './writer.ts';

declare var self: Worker;

// Log writing yields the CPU to request handling (see low-priority.ts).
lowerThreadPriority(Number(process.env.GATEWAY_LOG_WRITER_NICE ?? 19));

const send = (message: FromWorker) => self.postMessage(message);

let database: Database | undefined;
/** How this thread inserts rows: prepared statements on MySQL (mysql-insert.ts), the generic insert on SQLite. */
let insertRows: InsertRows | undefined;
let settings: WriteSettings | undefined;
/** Parts received of the batch being assembled. */
const assembling = new Map<number, { entries: QueuedEntry[]; seqs: number[] }>();
let chain: Promise<void> = Promise.resolve();

// Installed before anything is awaited, so that no message posted during start-up is missed.
self.onmessage = (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  chain = chain.then(() => handle(message)).catch((err: unknown) => send({ type: 'error', error: reason(err) }));
};

// Last resort: an error escaping elsewhere (a driver callback) is reported, never fatal to the thread.
process.on('uncaughtException', (err) => send({ type: 'error', error: reason(err) }));
process.on('unhandledRejection', (err) => send({ type: 'error', error: reason(err) }));

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case 'init':
      settings = message.settings;
      try {
        // The host's module (service databaseThreads): this plugin does not import the core's database package.
        const { openDatabase } = (await import(message.module)) as { openDatabase(connection: DatabaseConnection): Promise<Database> };
        database = await openDatabase(message.connection);
        const db = database;
        insertRows =
          db.dialect === 'mysql' ? mysqlLogInsert(db) : (rows, ignoreDuplicates) => db.insert(requestLogs, rows, { ignoreDuplicates });
        send({ type: 'ready', tid: currentThreadId() });
      } catch (err) {
        send({ type: 'init-failed', error: reason(err) });
      }
      return;
    case 'write':
      return write(message);
    case 'priority':
      if (!setThreadPriority(message.nice)) send({ type: 'priority-refused', nice: message.nice });
      return;
    case 'replay': {
      const insert = insertRows;
      if (!database || !insert || !settings) {
        send({ type: 'replay-failed', id: message.id, error: { message: 'the request log writer thread has no database' } });
        return;
      }
      try {
        const result = await replayText(message.text, insert, settings);
        send({ type: 'replayed', id: message.id, result });
      } catch (err) {
        send({ type: 'replay-failed', id: message.id, error: reason(err) });
      }
      return;
    }
    case 'close':
      try {
        await database?.close();
      } catch (err) {
        send({ type: 'error', error: reason(err) });
      }
      database = undefined;
      insertRows = undefined;
      send({ type: 'closed' });
      return;
  }
}

async function write(message: Extract<ToWorker, { type: 'write' }>): Promise<void> {
  const { id } = message;
  let batch = assembling.get(id);
  if (!batch) assembling.set(id, (batch = { entries: [], seqs: [] }));
  try {
    const part = fromWirePart(message);
    for (const entry of part.entries) batch.entries.push(entry);
    for (const seq of part.seqs) batch.seqs.push(seq);
  } catch (err) {
    assembling.delete(id);
    send({ type: 'failed', id, error: reason(err) });
    return;
  }
  if (!message.last) return;
  assembling.delete(id);
  const insert = insertRows;
  if (!database || !insert || !settings) {
    send({ type: 'failed', id, error: { message: 'the request log writer thread has no database' } });
    return;
  }
  const { entries, seqs } = batch;
  // Positions in this thread's list back to positions in the batch (entries left out on the way leave gaps).
  const seqOf = (position: number) => (position < seqs.length ? seqs[position]! : message.total);
  const emit = (event: WriterEvent) => {
    if (event.kind === 'written') send({ type: 'event', id, event: { ...event, next: seqOf(event.next) } });
    else if (event.kind === 'bad-entry') send({ type: 'event', id, event: { ...event, index: seqOf(event.index) } });
    else send({ type: 'event', id, event });
  };
  try {
    await writeEntries(entries, (rows) => insert(rows), settings, emit);
    send({ type: 'done', id });
  } catch (err) {
    send({ type: 'failed', id, error: reason(err) });
  }
}
