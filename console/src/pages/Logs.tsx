import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Page, type Self } from '../api.ts';
import { cents, dash, json, num, short, time } from '../format.ts';
import { navigate } from '../nav.ts';

/** A log as GET /v1/logs lists it (admin/settings/src/logs/present.ts); the detail adds bodies, attempts, hooks. */
export interface Log {
  id: string;
  trace_id: string;
  workspace_id: string;
  api_key_id: string;
  provider: string | null;
  provider_slug: string | null;
  model: string | null;
  endpoint: string;
  status: number | null;
  latency_ms: number | null;
  total_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cost_cents: number | null;
  cache_status: string | null;
  retry_count: number | null;
  target_index: number | null;
  metadata: Record<string, string> | null;
  metadata_hidden: boolean;
  error: { code: string | null; message: string | null } | null;
  created_at: string;
  request_body?: unknown;
  response_body?: unknown;
  attempts?: unknown;
  hook_results?: unknown;
}

/** The filters the form offers: parameters of docs/admin/analytics.md "Filters". */
const FILTERS = [
  { name: 'status', label: 'Status', placeholder: '200,429' },
  { name: 'provider', label: 'Provider', placeholder: 'openai or a slug' },
  { name: 'model', label: 'Model', placeholder: 'gpt-4o-mini' },
  { name: 'api_key_id', label: 'API key id', placeholder: 'uuid' },
  { name: 'trace_id', label: 'Trace id', placeholder: 'trace id' },
  { name: 'metadata', label: 'Metadata (JSON)', placeholder: '{"team":"red"}' },
  { name: 'latency_min', label: 'Latency from (ms)', placeholder: '1000' },
  { name: 'cost_min', label: 'Cost from (cents)', placeholder: '0.5' },
] as const;

/** The time filter: `time_of_generation_min` this far back. */
const SINCE: Record<string, number | null> = { 'any time': null, 'last hour': 3_600_000, 'last 24 hours': 86_400_000, 'last 7 days': 7 * 86_400_000 };

export function Logs({ sub }: { self: Self; sub: string }) {
  return sub ? <LogDetail id={sub} /> : <LogList />;
}

function LogList() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [applied, setApplied] = useState<Record<string, string>>({});
  const [logs, setLogs] = useState<Log[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [since, setSince] = useState('any time');
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState(false);
  const [tick, setTick] = useState(0);

  const query = (cursor?: string) => {
    const q = new URLSearchParams({ limit: '50' });
    for (const [k, v] of Object.entries(applied)) if (v.trim()) q.set(k, v.trim());
    const back = SINCE[since];
    if (back) q.set('time_of_generation_min', new Date(Date.now() - back).toISOString());
    if (cursor) q.set('cursor', cursor);
    return `/logs?${q}`;
  };

  useEffect(() => {
    let gone = false;
    api<Page<Log>>('GET', query())
      .then((page) => !gone && (setLogs(page.data), setNext(page.next_cursor ?? null), setError(null)))
      .catch((e) => !gone && setError(e instanceof ApiError ? e.message : String(e)));
    return () => {
      gone = true;
    };
  }, [applied, since, tick]);

  // Older rows, after the last one shown (the list's cursor).
  const more = () =>
    api<Page<Log>>('GET', query(next ?? undefined))
      .then((page) => (setLogs((shown) => [...(shown ?? []), ...page.data]), setNext(page.next_cursor ?? null)))
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));

  // Live: the newest page again every 5 seconds while the box is ticked.
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setTick((t) => t + 1), 5000);
    return () => clearInterval(timer);
  }, [live]);

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...filters });
        }}
      >
        {FILTERS.map((f) => (
          <label key={f.name}>
            {f.label}
            <input name={f.name} placeholder={f.placeholder} value={filters[f.name] ?? ''} onInput={(e) => setFilters({ ...filters, [f.name]: e.currentTarget.value })} />
          </label>
        ))}
        <label>
          Since
          <select value={since} onChange={(e) => setSince(e.currentTarget.value)}>
            {Object.keys(SINCE).map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
        <button type="button" onClick={() => setTick((t) => t + 1)}>
          Refresh
        </button>
        <label class="inline">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {logs === null ? (
        <p>Loading…</p>
      ) : logs.length === 0 ? (
        <p>No logs match.</p>
      ) : (
        <div class="scroll">
          <table>
            <caption class="sr-only">Request logs, newest first</caption>
            <thead>
              <tr>
                {['Time', 'Status', 'Provider', 'Model', 'Key', 'Workspace', 'Latency', 'Tokens', 'Cost', 'Metadata', 'Trace id'].map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {logs.map((log) => (
                <tr key={log.id}>
                  <td>
                    <a
                      href={`/console/logs/${log.id}`}
                      onClick={(e) => {
                        e.preventDefault();
                        navigate(`logs/${log.id}`);
                      }}
                    >
                      {time(log.created_at)}
                    </a>
                  </td>
                  <td class={log.status !== null && log.status < 400 ? 'ok' : 'bad'}>{log.status ?? dash}</td>
                  <td>{log.provider_slug ? `@${log.provider_slug}` : (log.provider ?? dash)}</td>
                  <td>{log.model ?? dash}</td>
                  <td title={log.api_key_id}>{short(log.api_key_id)}</td>
                  <td title={log.workspace_id}>{short(log.workspace_id)}</td>
                  <td class="num">{log.latency_ms === null ? dash : `${num(log.latency_ms)} ms`}</td>
                  <td class="num">{num(log.total_tokens)}</td>
                  <td class="num">{cents(log.cost_cents)}</td>
                  <td>{log.metadata_hidden ? 'hidden' : log.metadata ? Object.entries(log.metadata).map(([k, v]) => `${k}=${v}`).join(' ') : dash}</td>
                  <td>
                    <code>{log.trace_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {next && (
            <button type="button" onClick={more}>
              Older logs
            </button>
          )}
        </div>
      )}
    </section>
  );
}

function LogDetail({ id }: { id: string }) {
  const [log, setLog] = useState<Log | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<Log>('GET', `/logs/${encodeURIComponent(id)}`)
      .then(setLog)
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [id]);
  return (
    <section aria-labelledby="log-title">
      <p>
        <a
          href="/console/logs"
          onClick={(e) => {
            e.preventDefault();
            navigate('logs');
          }}
        >
          ← All logs
        </a>
      </p>
      <h1 id="log-title">Log {id}</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {log && (
        <>
          <dl class="facts">
            <dt>Time</dt>
            <dd>{time(log.created_at)}</dd>
            <dt>Status</dt>
            <dd>{log.status ?? dash}</dd>
            <dt>Endpoint</dt>
            <dd>{log.endpoint}</dd>
            <dt>Provider</dt>
            <dd>{log.provider_slug ? `@${log.provider_slug} (${log.provider})` : (log.provider ?? dash)}</dd>
            <dt>Model</dt>
            <dd>{log.model ?? dash}</dd>
            <dt>Latency</dt>
            <dd>{log.latency_ms === null ? dash : `${num(log.latency_ms)} ms`}</dd>
            <dt>Tokens (in / out)</dt>
            <dd>
              {num(log.prompt_tokens)} / {num(log.completion_tokens)}
            </dd>
            <dt>Cost</dt>
            <dd>{cents(log.cost_cents)}</dd>
            <dt>Cache</dt>
            <dd>{log.cache_status ?? dash}</dd>
            <dt>Retries · target</dt>
            <dd>
              {num(log.retry_count)} · {log.target_index ?? dash}
            </dd>
            <dt>Trace id</dt>
            <dd>
              <code>{log.trace_id}</code>
            </dd>
            {log.error && (
              <>
                <dt>Error</dt>
                <dd>
                  {log.error.code}: {log.error.message}
                </dd>
              </>
            )}
          </dl>
          <h2>Attempts (retries and fallbacks)</h2>
          <Attempts attempts={log.attempts} />
          <h2>Hook results</h2>
          <pre>{json(log.hook_results)}</pre>
          <h2>Request body</h2>
          <pre>{json(log.request_body)}</pre>
          <h2>Response body</h2>
          <pre>{json(log.response_body)}</pre>
        </>
      )}
    </section>
  );
}

/** One provider call of a request (sdk AttemptRecord), in the order made: the retry and fallback path. */
interface Attempt {
  index: string;
  providerId: string;
  providerSlug?: string;
  retry: number;
  status: number;
  latencyMs: number;
  error?: string;
  broken?: boolean;
  continued?: string;
}

function Attempts({ attempts }: { attempts: unknown }) {
  if (attempts === null || attempts === undefined || (Array.isArray(attempts) && attempts.length === 0)) return <p>None recorded.</p>;
  if (!Array.isArray(attempts)) return <pre>{json(attempts)}</pre>;
  return (
    <table class="attempts">
      <thead>
        <tr>
          {['#', 'Target', 'Provider', 'Retry', 'Status', 'Latency', 'Error'].map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(attempts as Attempt[]).map((a, i) => (
          <tr key={i}>
            <td>{i + 1}</td>
            <td>
              <code>{a.index}</code>
            </td>
            <td>{a.providerSlug ? `@${a.providerSlug}` : a.providerId}</td>
            <td class="num">{a.retry}</td>
            <td class={a.status < 400 ? 'ok' : 'bad'}>{a.status}</td>
            <td class="num">{num(a.latencyMs)} ms</td>
            <td>
              {a.error ?? dash}
              {a.broken ? ' (stream broke)' : ''}
              {a.continued ? ` (continued: ${a.continued})` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
