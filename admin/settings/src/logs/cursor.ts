/**
 * The opaque cursor of the log list: the (created_at, id) of the last row a page showed, base64url-encoded. The list
 * is ordered by both, newest first, so the next page is what comes strictly after that pair: stable while new rows
 * arrive (they sort before it) and an index range on (…, created_at) rather than an offset to skip.
 */
import { and, eq, Errors, lt, or, type SQL } from '@gateway/sdk';
import type { LogColumns } from './visibility.ts';

export interface LogCursor {
  createdAt: number;
  id: string;
}

export function encodeCursor(row: { created_at: number; id: string }): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

/** The cursor a page gave; 400 naming `cursor` for anything else. */
export function decodeCursor(raw: string): LogCursor {
  let parsed: unknown;
  try {
    parsed = raw.length <= 256 ? JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== 'string' || parsed[1].length > 36)
    throw Errors.badRequest('cursor is not one this list gave', 'cursor');
  return { createdAt: parsed[0], id: parsed[1] };
}

/** The rows after the cursor in the list's order (created_at desc, id desc). */
export function afterCursor(c: LogColumns, cursor: LogCursor): SQL {
  return or(lt(c.created_at, cursor.createdAt), and(eq(c.created_at, cursor.createdAt), lt(c.id, cursor.id)))!;
}
