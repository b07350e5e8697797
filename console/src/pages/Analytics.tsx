import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Page, type Self } from '../api.ts';
import { Chart, type Point } from '../chart.tsx';
import { cents, dash, num, time } from '../format.ts';

interface Summary {
  requests: number;
  cost: number | null;
  total_tokens: number | null;
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

interface Group {
  key: string | null;
  requests: number;
  cost: number | null;
  total_tokens: number | null;
  p95_latency: number | null;
  success_rate: number | null;
  last_seen: string | null;
}

interface Graph {
  data: Point[];
}

/** The graphs drawn, from GET /analytics/graphs/:metric, with the series each answers. */
const GRAPHS = [
  { metric: 'requests', title: 'Requests', series: ['requests'], format: (v: number) => num(v) },
  { metric: 'cost', title: 'Cost', series: ['cost'], format: (v: number) => cents(v) },
  { metric: 'tokens', title: 'Tokens', series: ['input_tokens', 'output_tokens'], format: (v: number) => num(v) },
  { metric: 'latency', title: 'Latency', series: ['p50_latency', 'p95_latency', 'p99_latency'], format: (v: number) => `${num(v)} ms` },
  { metric: 'errors', title: 'Errors', series: ['error_count'], format: (v: number) => num(v) },
  { metric: 'cache_hits', title: 'Cache hits', series: ['cache_hits'], format: (v: number) => num(v) },
] as const;

const GROUP_BY = ['model', 'provider', 'ai_service', 'status_code', 'api_key', 'workspace', 'config', 'prompt'] as const;
const RANGES = { '24 hours': 86_400_000, '7 days': 7 * 86_400_000, '30 days': 30 * 86_400_000 } as const;

const pct = (r: number | null) => (r === null ? dash : `${(r * 100).toFixed(1)} %`);
const ms = (v: number | null) => (v === null ? dash : `${num(v)} ms`);
const fail = (set: (s: string) => void) => (e: unknown) => set(e instanceof ApiError ? e.message : String(e));

export function Analytics(_: { self: Self; sub: string }) {
  const [range, setRange] = useState<keyof typeof RANGES>('7 days');
  const [groupBy, setGroupBy] = useState<(typeof GROUP_BY)[number]>('model');
  const [summary, setSummary] = useState<Summary | null>(null);
  const [graphs, setGraphs] = useState<Record<string, Graph>>({});
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const since = `time_of_generation_min=${encodeURIComponent(new Date(Date.now() - RANGES[range]).toISOString())}`;

  useEffect(() => {
    setError(null);
    api<Summary>('GET', `/analytics/summary?${since}`).then(setSummary).catch(fail(setError));
    setGraphs({});
    for (const g of GRAPHS)
      api<Graph>('GET', `/analytics/graphs/${g.metric}?${since}`)
        .then((graph) => setGraphs((all) => ({ ...all, [g.metric]: graph })))
        .catch(fail(setError));
  }, [range]);
  useEffect(() => {
    api<Page<Group>>('GET', `/analytics/groups/${groupBy}?${since}&columns=cost,total_tokens,p95_latency,success_rate,last_seen`)
      .then((p) => setGroups(p.data))
      .catch(fail(setError));
  }, [range, groupBy]);

  return (
    <section aria-labelledby="an-title">
      <h1 id="an-title">Analytics</h1>
      <label>
        Range{' '}
        <select value={range} onChange={(e) => setRange(e.currentTarget.value as keyof typeof RANGES)}>
          {Object.keys(RANGES).map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </label>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {summary && (
        <dl class="cards">
          {(
            [
              ['Requests', num(summary.requests)],
              ['Cost', cents(summary.cost)],
              ['Tokens', num(summary.total_tokens)],
              ['Latency p50 / p95 / p99', `${ms(summary.p50_latency)} / ${ms(summary.p95_latency)} / ${ms(summary.p99_latency)}`],
              ['Success rate', pct(summary.success_rate)],
              ['Errors', num(summary.error_count)],
              ['Cache hit rate', pct(summary.cache_hit_rate)],
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
      <label>
        Group by{' '}
        <select value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as (typeof GROUP_BY)[number])}>
          {GROUP_BY.map((g) => (
            <option key={g}>{g}</option>
          ))}
        </select>
      </label>
      {groups && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                {[groupBy, 'Requests', 'Cost', 'Tokens', 'p95 latency', 'Success rate', 'Last seen'].map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={String(g.key)}>
                  <td>{g.key ?? '(none)'}</td>
                  <td class="num">{num(g.requests)}</td>
                  <td class="num">{cents(g.cost)}</td>
                  <td class="num">{num(g.total_tokens)}</td>
                  <td class="num">{ms(g.p95_latency)}</td>
                  <td class="num">{pct(g.success_rate)}</td>
                  <td>{time(g.last_seen)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
