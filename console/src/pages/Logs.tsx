import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Page, type Self } from '../api.ts';
import { cents, dash, num, short, time } from '../format.ts';
import { apiParams, FILTER_FIELDS, type LogView, readView, SINCE, withMetadata, writeView } from '../logFilters.ts';
import { BASE, navigate } from '../nav.ts';
import { LogDetail, rememberListSearch } from './LogDetail.tsx';
import { SavedFilters } from './SavedFilters.tsx';
import './logs.css';

/** A log as GET /v1/logs lists it (admin/settings/src/logs/present.ts); the detail adds bodies, attempts, hooks. */
export interface Log {
  id: string;
  trace_id: string;
  workspace_id: string;
  api_key_id: string;
  user_id: string | null;
  provider: string | null;
  provider_slug: string | null;
  config_id: string | null;
  prompt_id: string | null;
  prompt_version: number | null;
  model: string | null;
  endpoint: string;
  method: string | null;
  path: string | null;
  status: number | null;
  latency_ms: number | null;
  upstream_latency_ms: number | null;
  total_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_write_input_tokens: number | null;
  audio_input_tokens: number | null;
  image_input_tokens: number | null;
  reasoning_tokens: number | null;
  audio_output_tokens: number | null;
  cost_cents: number | null;
  priced: boolean | null;
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

/** How often the live table asks for new rows. */
const LIVE_EVERY_MS = 5000;

export function Logs({ self, sub }: { self: Self; sub: string }) {
  return sub ? <LogDetail id={sub} /> : <LogList self={self} />;
}

function LogList({ self }: { self: Self }) {
  // The address is the view's truth: the form's draft becomes the view (and the address) on Filter.
  const [view, setView] = useState<LogView>(() => readView(location.search));
  const [draft, setDraft] = useState<LogView>(view);
  const [logs, setLogs] = useState<Log[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [updated, setUpdated] = useState<string | null>(null);
  const shown = useRef<Log[]>([]);
  shown.current = logs ?? [];

  // Back and Forward between filtered views.
  useEffect(() => {
    const onPop = () => {
      if (!location.pathname.replace(/\/+$/, '').endsWith('/logs')) return;
      const v = readView(location.search);
      setView(v);
      setDraft(v);
    };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  useEffect(() => {
    rememberListSearch(writeView(view));
  }, [view]);

  const show = (v: LogView, push: boolean) => {
    const url = `${BASE}logs${writeView(v)}`;
    if (push) history.pushState(null, '', url);
    else history.replaceState(null, '', url);
    setView(v);
  };

  const query = (cursor?: string) => {
    const q = apiParams(view);
    q.set('limit', '50');
    if (cursor) q.set('cursor', cursor);
    return `/logs?${q}`;
  };
  const fail = (e: unknown) => setError(e instanceof ApiError ? e.message : String(e));

  // The newest page of the view (again on Refresh).
  useEffect(() => {
    let gone = false;
    setFresh(new Set());
    api<Page<Log>>('GET', query())
      .then((page) => {
        if (gone) return;
        setLogs(page.data);
        setNext(page.next_cursor ?? null);
        setError(null);
      })
      .catch((e) => !gone && fail(e));
    return () => {
      gone = true;
    };
  }, [view.filters, view.since, view.from, view.to, tick]);

  // Live: the newest page of the same view every few seconds; rows not shown yet go on top, the older pages already
  // loaded stay. More new rows than a page: the table starts again from the newest (with its cursor).
  useEffect(() => {
    if (!view.live) return;
    let gone = false;
    const timer = setInterval(() => {
      api<Page<Log>>('GET', query())
        .then((page) => {
          if (gone) return;
          const known = new Set(shown.current.map((l) => l.id));
          const added = page.data.filter((l) => !known.has(l.id));
          const gap = added.length === page.data.length && page.next_cursor && shown.current.length > 0;
          if (gap) {
            setLogs(page.data);
            setNext(page.next_cursor ?? null);
          } else if (added.length) setLogs([...added, ...shown.current]);
          // The rows of the last update that brought any stay marked until the next one that does.
          if (added.length) setFresh(new Set(added.map((l) => l.id)));
          setUpdated(`${new Date().toLocaleTimeString()}: ${added.length === 0 ? 'no new logs' : added.length === 1 ? '1 new log' : `${added.length} new logs`}`);
          setError(null);
        })
        .catch((e) => !gone && fail(e));
    }, LIVE_EVERY_MS);
    return () => {
      gone = true;
      clearInterval(timer);
    };
  }, [view, tick]);

  // Older rows, after the last one shown (the list's cursor).
  const more = () =>
    api<Page<Log>>('GET', query(next ?? undefined))
      .then((page) => (setLogs([...shown.current, ...page.data]), setNext(page.next_cursor ?? null)))
      .catch(fail);

  const field = (name: string, value: string) => setDraft({ ...draft, filters: { ...draft.filters, [name]: value } });

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <SavedFilters
        self={self}
        view={view}
        onApply={(v) => {
          setDraft(v);
          show(v, true);
        }}
      />
      <form
        class="filters"
        aria-label="Filter the logs"
        onSubmit={(e) => {
          e.preventDefault();
          show({ ...draft, live: view.live }, true);
          // Asked again even when nothing changed (a moving window moves on).
          setTick((t) => t + 1);
        }}
      >
        {FILTER_FIELDS.map((f) => (
          <label key={f.name}>
            {f.label}
            <input
              name={f.name}
              placeholder={f.placeholder}
              inputMode={f.numeric ? 'decimal' : undefined}
              value={draft.filters[f.name] ?? ''}
              onInput={(e) => field(f.name, e.currentTarget.value)}
            />
          </label>
        ))}
        <label>
          Since
          <select value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.currentTarget.value })}>
            {Object.entries(SINCE).map(([k, s]) => (
              <option key={k} value={k}>
                {s.label}
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
        <div class="actions">
          <button type="submit">Filter</button>
          <button
            type="button"
            onClick={() => {
              const none: LogView = { filters: {}, since: 'any', from: '', to: '', live: view.live };
              setDraft(none);
              show(none, true);
            }}
          >
            Clear
          </button>
          <button type="button" onClick={() => setTick((t) => t + 1)}>
            Refresh
          </button>
          <label class="inline">
            <input type="checkbox" checked={view.live} onChange={(e) => show({ ...view, live: e.currentTarget.checked }, false)} /> Live
          </label>
        </div>
      </form>
      <p class="muted live-status" role="status" aria-live="polite">
        {view.live ? `Live: new logs every ${LIVE_EVERY_MS / 1000} s${updated ? ` · ${updated}` : ''}` : ''}
      </p>
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
          <table class="logs">
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
                <tr key={log.id} class={fresh.has(log.id) ? 'fresh' : undefined}>
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
                  <td>
                    {log.metadata_hidden
                      ? 'hidden'
                      : log.metadata && Object.keys(log.metadata).length
                        ? Object.entries(log.metadata).map(([k, v]) => (
                            // A pair filters the table by it (added to the metadata filter).
                            <button
                              type="button"
                              class="pair"
                              key={k}
                              title={`Show only logs with ${k}=${v}`}
                              onClick={() => {
                                const v2 = withMetadata(view, k, v);
                                setDraft(v2);
                                show(v2, true);
                              }}
                            >
                              {k}={v}
                            </button>
                          ))
                          .flatMap((b) => [b, ' '])
                        : dash}
                  </td>
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
