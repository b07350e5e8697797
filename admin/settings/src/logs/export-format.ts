/**
 * The lines of a log export: JSON Lines (one log per line, as GET /logs shows it) or CSV (RFC 4180: a header of the
 * same fields, objects as their JSON text, fields with a comma, quote or line break quoted, quotes doubled).
 */
export type ExportFormat = 'jsonl' | 'csv';

export const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Writes logs as lines; `header()` first for CSV (empty for JSON Lines). */
export class ExportLines {
  private columns: string[] | undefined;

  constructor(private readonly format: ExportFormat) {}

  /** The lines of a batch (each ending in a newline); CSV's header comes before the first batch's first row. */
  lines(logs: readonly Record<string, unknown>[]): string {
    if (this.format === 'jsonl') return logs.map((log) => `${JSON.stringify(log)}\n`).join('');
    let out = '';
    for (const log of logs) {
      if (!this.columns) {
        this.columns = Object.keys(log);
        out += `${this.columns.map(csvField).join(',')}\r\n`;
      }
      out += `${this.columns.map((c) => csvField(log[c])).join(',')}\r\n`;
    }
    return out;
  }
}
