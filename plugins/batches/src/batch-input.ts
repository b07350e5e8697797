/**
 * A batch's input file (JSONL): one request per line, `{custom_id, method: 'POST', url, body}`, every url the batch's
 * endpoint, custom_ids unique. Any bad line refuses the whole file (the batch fails with each bad line's number), as
 * OpenAI does, before a single request is sent.
 */
import type { JsonObject } from '@gateway/sdk';

export interface BatchLine {
  /** 1-based line number in the file. */
  line: number;
  customId: string;
  body: JsonObject;
}

export interface LineError {
  code: string;
  message: string;
  param: string | null;
  line: number;
}

/** The most lines one batch may hold (OpenAI's limit). */
export const MAX_BATCH_LINES = 50_000;

export function parseBatchInput(text: string, endpoint: string): { lines: BatchLine[]; errors: LineError[] } {
  const lines: BatchLine[] = [];
  const errors: LineError[] = [];
  const seen = new Set<string>();
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const source = raw[i]!.trim();
    if (source === '') continue;
    const line = i + 1;
    const fail = (code: string, message: string, param: string | null = null) => errors.push({ code, message, param, line });
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch {
      fail('invalid_json_line', 'This line is not valid JSON.');
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      fail('invalid_request', 'Each line must be a JSON object.');
      continue;
    }
    const entry = value as Record<string, unknown>;
    if (typeof entry.custom_id !== 'string' || entry.custom_id === '') fail('missing_required_parameter', 'custom_id must be a non-empty string.', 'custom_id');
    else if (seen.has(entry.custom_id)) fail('duplicate_custom_id', `The custom_id ${entry.custom_id} is used on an earlier line.`, 'custom_id');
    if (entry.method !== 'POST') fail('invalid_method', 'method must be POST.', 'method');
    if (entry.url !== endpoint) fail('mismatched_url', `url must be the batch's endpoint, ${endpoint}.`, 'url');
    const body = entry.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) fail('missing_required_parameter', 'body must be a JSON object.', 'body');
    if (errors.length && errors.at(-1)!.line === line) continue;
    seen.add(entry.custom_id as string);
    lines.push({ line, customId: entry.custom_id as string, body: body as JsonObject });
  }
  if (lines.length + errors.length === 0) errors.push({ code: 'empty_file', message: 'The input file has no requests.', param: null, line: 1 });
  if (lines.length > MAX_BATCH_LINES)
    errors.push({ code: 'too_many_requests', message: `A batch holds at most ${MAX_BATCH_LINES} requests.`, param: null, line: MAX_BATCH_LINES + 1 });
  return { lines, errors };
}
