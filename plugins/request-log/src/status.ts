/** The request log's Prometheus series and /health state (Services.requestLogStatus), read from the queue's counters. */
import type { RequestLogStatus } from '@gateway/sdk';
import type { LogQueue } from './queue.ts';

export function requestLogStatus(queue: LogQueue): RequestLogStatus {
  return {
    metrics() {
      const s = queue.stats;
      const lines = [
        ['gateway_request_log_queue_entries', 'gauge', 'Entries waiting in memory to be written.', queue.size],
        ['gateway_request_log_queue_bytes', 'gauge', 'Estimated bytes of the entries waiting in memory (bounded by LOG_QUEUE_MAX_BYTES).', queue.bytes],
        ['gateway_request_log_writer_behind', 'gauge', 'The writer thread runs at its catching-up priority (GATEWAY_LOG_WRITER_NICE_BEHIND): 1, else 0.', queue.writerBehind ? 1 : 0],
        ['gateway_request_log_journal_bytes', 'gauge', "Bytes of the journal's files on disk (bounded by LOG_JOURNAL_MAX_BYTES).", queue.journalBytes],
        ['gateway_request_log_journal_pending_bytes', 'gauge', 'Journal bytes not replayed into the database yet.', queue.journalPendingBytes],
        ['gateway_request_log_rows_written_total', 'counter', 'Rows written straight from the queue.', s.written],
        ['gateway_request_log_rows_journaled_total', 'counter', 'Entries appended to the journal (the database was down or behind).', s.journaled],
        ['gateway_request_log_rows_replayed_total', 'counter', 'Rows written from the journal.', s.replayed],
      ] as const;
      const out: string[] = [];
      for (const [name, type, help, value] of lines) out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
      out.push(
        '# HELP gateway_request_log_rows_dropped_total Entries lost, by reason: journal_full (disk budget used up), queue_full (no journal), write_failed (no journal, or not convertible), journal_corrupt (damaged records).',
        '# TYPE gateway_request_log_rows_dropped_total counter',
        `gateway_request_log_rows_dropped_total{reason="journal_full"} ${s.droppedJournalFull}`,
        `gateway_request_log_rows_dropped_total{reason="queue_full"} ${s.droppedOverflow}`,
        `gateway_request_log_rows_dropped_total{reason="write_failed"} ${s.droppedFailed}`,
        `gateway_request_log_rows_dropped_total{reason="journal_corrupt"} ${s.corruptRecords}`,
      );
      return `${out.join('\n')}\n`;
    },
    health() {
      return { ...queue.health() };
    },
  };
}
