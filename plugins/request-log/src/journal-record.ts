/**
 * The journal's record format: one row per line, `<crc32 of the JSON, 8 hex digits> <the row as JSON>\n`. JSON
 * escapes line breaks, so a line is a record; the checksum finds a record cut short by a crash or damaged on disk
 * (skipped and counted, never inserted). The row is the `request_logs` row as `toRow` made it, with its id: replay
 * inserts it as it is, on either dialect.
 */
import type { RequestLogRow } from './row.ts';

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

export function encodeRecord(row: RequestLogRow): string {
  const json = JSON.stringify(row);
  return `${hex(Bun.hash.crc32(json))} ${json}\n`;
}

export interface DecodedRecords {
  rows: RequestLogRow[];
  /** Lines whose checksum or JSON was wrong. */
  corrupt: number;
}

/** Whole lines (the text ends with a line break, or is empty) back to rows. */
export function decodeRecords(text: string): DecodedRecords {
  const rows: RequestLogRow[] = [];
  let corrupt = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start) {
      const line = text.slice(start, end);
      const json = line.slice(9);
      const row = line.length > 9 && line[8] === ' ' && line.slice(0, 8) === hex(Bun.hash.crc32(json)) ? parse(json) : undefined;
      if (row) rows.push(row);
      else corrupt++;
    }
    start = end + 1;
  }
  return { rows, corrupt };
}

function parse(json: string): RequestLogRow | undefined {
  try {
    const row = JSON.parse(json) as unknown;
    return row && typeof row === 'object' && typeof (row as { id?: unknown }).id === 'string' ? (row as RequestLogRow) : undefined;
  } catch {
    return undefined;
  }
}
