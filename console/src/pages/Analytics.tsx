/**
 * Analytics (docs/admin/analytics.md): the summary, a chart per graph metric of GET /v1/analytics/graphs/:metric, and
 * the group table of GET /v1/analytics/groups/:groupBy with every column, sortable and paged. Every request takes the
 * same filters as the logs page, and the view (range, filters, grouping, sort, page) lives in the page's address.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Page, type Self } from '../api.ts';
import { Chart, type Point } from '../chart.tsx';
import { cents, dash, num, time } from '../format.ts';
import { apiParams, FILTER_FIELDS, readView, SINCE, writeView } from '../logFilters.ts';
import { BASE } from '../nav.ts';
import './analytics.css';

interface Summary {
  requests: number;
  cost: number | null;
  total_tokens: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  avg_latency: number | null;
  p50_latency: number | null;
  p95_latency: number | null;
  p99_latency: number | null;
  success_rate: number | null;
  error_count: number;
  cache_hits: number;
  cache_hit_rate: number | null;
  users: number;
}

type Group = { key: string | number | null; requests: number } & Record<string, number | string | null>;

interface Graph {
  data: Point[];
}

const pct = (r: number | null) => (r === null ? dash : `${(r * 100).toFixed(1)} %`);
const ms = (v: number | null) => (v === null ? dash : `${num(v)} ms`);
const fail = (set: (s: string) => void) => (e: unknown) => set(e instanceof ApiError ? e.message : String(e));

/** The graphs drawn, one per metric of the API, with the series each answers. */
const GRAPHS = [
  { metric: 'requests', title: 'Requests', series: ['requests'], format: (v: number) => num(v) },
  { metric: 'users', title: 'Users', series: ['users'], format: (v: number) => num(v) },
  { metric: 'cost', title: 'Cost', series: ['cost'], format: (v: number) => cents(v) },
  { metric: 'tokens', title: 'Tokens', series: ['input_tokens', 'output_tokens'], format: (v: number) => num(v) },
  { metric: 'latency', title: 'Latency', series: ['avg_latency', 'p50_latency', 'p95_latency', 'p99_latency'], format: (v: number) => `${num(v)} ms` },
  { metric: 'errors', title: 'Errors', series: ['error_count'], format: (v: number) => num(v) },
  { metric: 'cache_hits', title: 'Cache hits', series: ['cache_hits'], format: (v: number) => num(v) },
] as const;

/** Every column the groups route offers, with its header and how it is shown. */
const COLUMNS: { name: string; title: string; show: (v: number | string | null) => string }[] = [
  { name: 'cost', title: 'Cost', show: (v) => cents(v as number | null) },
  { name: 'total_tokens', title: 'Tokens', show: (v) => num(v as number | null) },
  { name: 'avg_tokens', title: 'Avg tokens', show: (v) => num(v as number | null, 1) },
  { name: 'avg_input_tokens', title: 'Avg in', show: (v) => num(v as number | null, 1) },
  { name: 'avg_output_tokens', title: 'Avg out', show: (v) => num(v as number | null, 1) },
  { name: 'avg_latency', title: 'Avg latency', show: (v) => ms(v as number | null) },
  { name: 'p95_latency', title: 'p95 latency', show: (v) => ms(v as number | null) },
  { name: 'p99_latency', title: 'p99 latency', show: (v) => ms(v as number | null) },
  { name: 'success_rate', title: 'Success rate', show: (v) => pct(v as number | null) },
  { name: 'error_count', title: 'Errors', show: (v) => num(v as number | null) },
  { name: 'cache_hit_rate', title: 'Cache hit rate', show: (v) => pct(v as number | null) },
  { name: 'first_seen', title: 'First seen', show: (v) => time(v as string | null) },
  { name: 'last_seen', title: 'Last seen', show: (v) => time(v as string | null) },
];

const GROUP_BY = ['model', 'provider', 'ai_service', 'status_code', 'api_key', 'workspace', 'config', 'prompt', 'metadata'] as const;
const RANGES = ['1h', '24h', '7d', '30d', 'range'] as const;
const PAGE_SIZE = 20;

/** The page's own part of the address, beside the filters of logFilters.ts. */
interface Grouping {
  by: string;
  metaKey: string;
  orderBy: string;
  order: 'asc' | 'desc';
  page: number;
}

function readGrouping(search: string): Grouping {
  const q = new URLSearchParams(search);
  const by = q.get('group_by') ?? 'model';
  return {
    by: (GROUP_BY as readonly string[]).includes(by) ? by : 'model',
    metaKey: q.get('metadata_key') ?? '',
    orderBy: q.get('order_by') ?? 'requests',
    order: q.get('order') === 'asc' ? 'asc' : 'desc',
    page: Math.max(0, Number(q.get('page')) || 0),
  };
}

function address(view: ReturnType<typeof readView>, g: Grouping): string {
  const q = new URLSearchParams(writeView({ ...view, live: false }).slice(1));
  if (g.by !== 'model') q.set('group_by', g.by);
  if (g.by === 'metadata' && g.metaKey) q.set('metadata_key', g.metaKey);
  if (g.orderBy !== 'requests') q.set('order_by', g.orderBy);
  if (g.order !== 'desc') q.set('order', g.order);
  if (g.page) q.set('page', String(g.page));
  const s = q.toString();
  return `${BASE}analytics${s ? `?${s}` : ''}`;
}

/** Analytics always cover a range: the API's default is seven days; the console says which. */
function initialView() {
  const v = readView(location.search);
  return v.since === 'any' ? { ...v, since: '7d' } : v;
}

export function Analytics(_: { self: Self; sub: string }) {
  const [view, setView] = useState(initialView);
  const [draft, setDraft] = useState(view);
  const [grouping, setGrouping] = useState(() => readGrouping(location.search));
  const [metaDraft, setMetaDraft] = useState(grouping.metaKey);
  const [summary, setSummary] = useState<Summary | null>(null);
  const [graphs, setGraphs] = useState<Record<string, Graph>>({});
  const [groups, setGroups] = useState<Page<Group> | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Whether the gateway answers analytics to this caller for this view: asked once (the summary) before the charts and
  // groups, so a caller it refuses (membersViewAnalytics off, hidden metadata) is not sent nine refused requests.
  const [open, setOpen] = useState(false);
  // The filters' box: open when the address has filters, then as the user leaves it.
  const [showFilters, setShowFilters] = useState(() => Object.keys(view.filters).length > 0);

  const go = (v: typeof view, g: Grouping) => {
    history.pushState(null, '', address(v, g));
    setView(v);
    setGrouping(g);
  };
  useEffect(() => {
    const onPop = () => {
      if (!location.pathname.includes('/analytics')) return;
      const v = initialView();
      const g = readGrouping(location.search);
      setView(v);
      setDraft(v);
      setGrouping(g);
      setMetaDraft(g.metaKey);
    };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  const params = () => apiParams(view).toString();

  useEffect(() => {
    setError(null);
    setSummary(null);
    setGraphs({});
    setOpen(false);
    const q = params();
    let gone = false;
    api<Summary>('GET', `/analytics/summary?${q}`)
      .then((s) => {
        if (gone) return;
        setSummary(s);
        setOpen(true);
        for (const g of GRAPHS)
          api<Graph>('GET', `/analytics/graphs/${g.metric}?${q}`)
            .then((graph) => !gone && setGraphs((all) => ({ ...all, [g.metric]: graph })))
            .catch(fail(setError));
      })
      .catch((e) => !gone && fail(setError)(e));
    return () => {
      gone = true;
    };
  }, [view]);

  const groupBy = grouping.by === 'metadata' ? (grouping.metaKey ? `metadata.${grouping.metaKey}` : null) : grouping.by;
  useEffect(() => {
    setGroups(null);
    if (!groupBy || !open) return;
    const q = new URLSearchParams(params());
    q.set('columns', COLUMNS.map((c) => c.name).join(','));
    q.set('order_by', grouping.orderBy);
    q.set('order', grouping.order);
    q.set('page_size', String(PAGE_SIZE));
    q.set('current_page', String(grouping.page));
    api<Page<Group>>('GET', `/analytics/groups/${encodeURIComponent(groupBy)}?${q}`)
      .then(setGroups)
      .catch(fail(setError));
  }, [view, grouping, open]);

  /** A header's sort: the column by itself descending first, then ascending. */
  const sortBy = (name: string) =>
    go(view, { ...grouping, orderBy: name, order: grouping.orderBy === name && grouping.order === 'desc' ? 'asc' : 'desc', page: 0 });
  const sortHeader = (name: string, title: string) => (
    <th key={name} scope="col" aria-sort={grouping.orderBy === name ? (grouping.order === 'asc' ? 'ascending' : 'descending') : undefined}>
      <button type="button" class="sort" onClick={() => sortBy(name)}>
        {title}
        {grouping.orderBy === name ? (grouping.order === 'asc' ? ' ▲' : ' ▼') : ''}
      </button>
    </th>
  );
  const pages = groups ? Math.max(1, Math.ceil((groups.total ?? 0) / PAGE_SIZE)) : 1;

  return (
    <section aria-labelledby="an-title">
      <h1 id="an-title">Analytics</h1>
      <form
        class="filters"
        aria-label="Filter the analytics"
        onSubmit={(e) => {
          e.preventDefault();
          go(draft, { ...grouping, page: 0 });
        }}
      >
        <label>
          Range
          <select value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.currentTarget.value })}>
            {RANGES.map((k) => (
              <option key={k} value={k}>
                {SINCE[k]?.label}
              </option>
            ))}
          </select>
        </label>
        {draft.since === 'range' && (
          <>
            <label>
              From
              <input type="datetime-local" step="1" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
            </label>
            <label>
              To
              <input type="datetime-local" step="1" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
            </label>
          </>
        )}
        <details class="more" open={showFilters} onToggle={(e) => setShowFilters(e.currentTarget.open)}>
          <summary>Filters{Object.keys(view.filters).length ? ` (${Object.keys(view.filters).length})` : ''}</summary>
          <div class="filters">
            {FILTER_FIELDS.map((f) => (
              <label key={f.name}>
                {f.label}
                <input
                  name={f.name}
                  placeholder={f.placeholder}
                  value={draft.filters[f.name] ?? ''}
                  onInput={(e) => setDraft({ ...draft, filters: { ...draft.filters, [f.name]: e.currentTarget.value } })}
                />
              </label>
            ))}
          </div>
        </details>
        <button type="submit">Apply</button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {summary && (
        <dl class="cards" aria-label="Summary">
          {(
            [
              ['Requests', num(summary.requests)],
              ['Cost', cents(summary.cost)],
              ['Tokens (in / out)', `${num(summary.total_tokens)} (${num(summary.input_tokens)} / ${num(summary.output_tokens)})`],
              ['Latency avg', ms(summary.avg_latency)],
              ['Latency p50 / p95 / p99', `${ms(summary.p50_latency)} / ${ms(summary.p95_latency)} / ${ms(summary.p99_latency)}`],
              ['Success rate', pct(summary.success_rate)],
              ['Errors', num(summary.error_count)],
              ['Cache hits', `${num(summary.cache_hits)} (${pct(summary.cache_hit_rate)})`],
              ['Users', num(summary.users)],
            ] as const
          ).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      )}
      <h2>Over time</h2>
      <div class="charts">
        {GRAPHS.map((g) => {
          const graph = graphs[g.metric];
          return graph ? <Chart key={g.metric} title={g.title} data={graph.data} series={[...g.series]} format={g.format} /> : null;
        })}
      </div>
      <h2>Groups</h2>
      <form
        class="filters"
        aria-label="Group the calls"
        onSubmit={(e) => {
          e.preventDefault();
          go(view, { ...grouping, metaKey: metaDraft.trim(), page: 0 });
        }}
      >
        <label>
          Group by
          <select
            value={grouping.by}
            onChange={(e) => {
              const by = e.currentTarget.value;
              // A sort by a column stays; the key's sort does too.
              go(view, { ...grouping, by, page: 0 });
            }}
          >
            {GROUP_BY.map((g) => (
              <option key={g} value={g}>
                {g === 'metadata' ? 'metadata.<key>' : g}
              </option>
            ))}
          </select>
        </label>
        {grouping.by === 'metadata' && (
          <>
            <label>
              Metadata key
              <input value={metaDraft} placeholder="team" pattern="[\w.\-]{1,128}" onInput={(e) => setMetaDraft(e.currentTarget.value)} />
            </label>
            <button type="submit">Group</button>
          </>
        )}
      </form>
      {groups && (
        <>
          <div class="scroll">
            <table class="groups">
              <caption class="sr-only">
                Calls grouped by {groupBy}, {groups.total ?? 0} groups
              </caption>
              <thead>
                <tr>
                  {sortHeader('key', groupBy ?? '')}
                  {sortHeader('requests', 'Requests')}
                  {COLUMNS.map((c) => sortHeader(c.name, c.title))}
                </tr>
              </thead>
              <tbody>
                {groups.data.map((g) => (
                  <tr key={String(g.key)}>
                    <th scope="row">{g.key ?? '(none)'}</th>
                    <td class="num">{num(g.requests)}</td>
                    {COLUMNS.map((c) => (
                      <td key={c.name} class={c.name.endsWith('_seen') ? undefined : 'num'}>
                        {c.show(g[c.name] ?? null)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {pages > 1 && (
            <nav class="pager" aria-label="Group pages">
              <button type="button" disabled={grouping.page === 0} onClick={() => go(view, { ...grouping, page: grouping.page - 1 })}>
                Previous
              </button>
              <span>
                Page {grouping.page + 1} of {pages}
              </span>
              <button type="button" disabled={grouping.page + 1 >= pages} onClick={() => go(view, { ...grouping, page: grouping.page + 1 })}>
                Next
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
