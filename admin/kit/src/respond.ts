/** Answers of the administration API (INTERFACE.md): JSON, and lists as `{object: "list", data, total}`. */
import { Errors } from '@gateway/sdk';

export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status });
}

/** 204 for a delete. */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}

export function list<T>(data: readonly T[], total: number, extra?: Record<string, unknown>): Response {
  return Response.json({ object: 'list', data, total, ...extra });
}

export interface Page {
  /** 0-based. */
  currentPage: number;
  pageSize: number;
  offset: number;
  limit: number;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** `current_page` (0-based, default 0) and `page_size` (1..1000, default 50); 400 naming the parameter otherwise. */
export function page(query: URLSearchParams, defaults: { pageSize?: number } = {}): Page {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw Errors.badRequest(`${name} must be an integer from ${min} to ${max}`, name);
    return n;
  };
  const pageSize = int('page_size', defaults.pageSize ?? DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  const currentPage = int('current_page', 0, 0, 1_000_000);
  return { currentPage, pageSize, offset: currentPage * pageSize, limit: pageSize };
}

/** A comma list query parameter (`ids=a,b`), trimmed, empties dropped; undefined when absent. */
export function csv(query: URLSearchParams, name: string): string[] | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Milliseconds since the epoch as ISO 8601, null kept. */
export function iso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
