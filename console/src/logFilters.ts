/**
 * The log filters the console offers (the common filters of GET /v1/logs and the analytics routes,
 * docs/admin/analytics.md "Filters"), and their place in the page's address: a filtered view can be shared, reloaded
 * after signing in again, and left and found again with Back.
 */

export interface FilterField {
  readonly name: string;
  readonly label: string;
  readonly placeholder: string;
  /** Shown when a number is expected (the browser checks it before the gateway does). */
  readonly numeric?: boolean;
}

/** Every filter of the API but the time window (below), in the form's order. */
export const FILTER_FIELDS: readonly FilterField[] = [
  { name: 'status', label: 'Status', placeholder: '200,429' },
  { name: 'provider', label: 'Provider', placeholder: 'openai or a slug' },
  { name: 'ai_service', label: 'Provider type', placeholder: 'openai,anthropic' },
  { name: 'model', label: 'Model', placeholder: 'gpt-4o-mini' },
  { name: 'api_key_id', label: 'API key id', placeholder: 'uuid, …' },
  { name: 'workspace_id', label: 'Workspace', placeholder: 'id or slug' },
  { name: 'user_id', label: 'User id', placeholder: 'uuid, …' },
  { name: 'config_id', label: 'Config', placeholder: 'id or slug' },
  { name: 'prompt_id', label: 'Prompt id', placeholder: 'uuid' },
  { name: 'prompt_version', label: 'Prompt version', placeholder: '2' },
  { name: 'trace_id', label: 'Trace id', placeholder: 'trace id' },
  { name: 'metadata', label: 'Metadata (JSON)', placeholder: '{"team":"red"}' },
  { name: 'latency_min', label: 'Latency from (ms)', placeholder: '1000', numeric: true },
  { name: 'latency_max', label: 'Latency to (ms)', placeholder: '5000', numeric: true },
  { name: 'cost_min', label: 'Cost from (cents)', placeholder: '0.5', numeric: true },
  { name: 'cost_max', label: 'Cost to (cents)', placeholder: '10', numeric: true },
];

/** The time window: a moving one (kept relative in the address, so live updates move with it) or a fixed range. */
export const SINCE: Record<string, { label: string; ms: number | null }> = {
  any: { label: 'any time', ms: null },
  '1h': { label: 'last hour', ms: 3_600_000 },
  '24h': { label: 'last 24 hours', ms: 86_400_000 },
  '7d': { label: 'last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'last 30 days', ms: 30 * 86_400_000 },
  range: { label: 'from … to …', ms: null },
};

/** What the address holds: the filter values, `since`, `from` / `to` (datetime-local values) and `live`. */
export interface LogView {
  filters: Record<string, string>;
  since: string;
  from: string;
  to: string;
  live: boolean;
}

export function readView(search: string): LogView {
  const q = new URLSearchParams(search);
  const filters: Record<string, string> = {};
  for (const f of FILTER_FIELDS) {
    const v = q.get(f.name);
    if (v) filters[f.name] = v;
  }
  const since = q.get('since') ?? 'any';
  return { filters, since: since in SINCE ? since : 'any', from: q.get('from') ?? '', to: q.get('to') ?? '', live: q.get('live') === '1' };
}

/** The view as an address's query (empty values left out), `?…` or ''. */
export function writeView(view: LogView): string {
  const q = new URLSearchParams();
  for (const f of FILTER_FIELDS) {
    const v = view.filters[f.name]?.trim();
    if (v) q.set(f.name, v);
  }
  if (view.since !== 'any') q.set('since', view.since);
  if (view.since === 'range') {
    if (view.from) q.set('from', view.from);
    if (view.to) q.set('to', view.to);
  }
  if (view.live) q.set('live', '1');
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The API's query parameters for the view (the time window computed now). */
export function apiParams(view: LogView, now = Date.now()): URLSearchParams {
  const q = new URLSearchParams();
  for (const f of FILTER_FIELDS) {
    const v = view.filters[f.name]?.trim();
    if (v) q.set(f.name, v);
  }
  const back = SINCE[view.since]?.ms;
  if (back) q.set('time_of_generation_min', new Date(now - back).toISOString());
  if (view.since === 'range') {
    // datetime-local values are the browser's local time; the API takes ISO 8601.
    const from = isoOf(view.from);
    const to = isoOf(view.to);
    if (from) q.set('time_of_generation_min', from);
    if (to) q.set('time_of_generation_max', to);
  }
  return q;
}

function isoOf(local: string): string | undefined {
  const d = new Date(local);
  return local && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined;
}

/** A metadata pair added to the view's metadata filter (a click on a value in the table). */
export function withMetadata(view: LogView, key: string, value: string): LogView {
  let current: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(view.filters.metadata ?? '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) current = parsed as Record<string, string>;
  } catch {
    // An unreadable filter is replaced.
  }
  return { ...view, filters: { ...view.filters, metadata: JSON.stringify({ ...current, [key]: value }) } };
}
