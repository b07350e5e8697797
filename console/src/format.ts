/** Display helpers shared by the pages. */
export const dash = '—';

export function time(iso: string | null | undefined): string {
  if (!iso) return dash;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function num(n: number | null | undefined, digits = 0): string {
  return n === null || n === undefined ? dash : n.toLocaleString(undefined, { maximumFractionDigits: digits });
}

/** Costs are US cents (fractional) in the API; shown in dollars. */
export function cents(c: number | null | undefined): string {
  return c === null || c === undefined ? dash : `$${(c / 100).toFixed(c < 1 ? 6 : 4)}`;
}

export function short(id: string | null | undefined): string {
  return id ? (id.length > 12 ? `${id.slice(0, 8)}…` : id) : dash;
}

export function json(value: unknown): string {
  if (value === null || value === undefined) return dash;
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}
