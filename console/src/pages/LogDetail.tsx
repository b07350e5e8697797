/**
 * One log (GET /v1/logs/:id): the facts of the call, the retry and fallback path (every provider call made, in
 * order), the hook results, the metadata and the request and response bodies.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { cents, dash, json, num, time } from '../format.ts';
import { navigate } from '../nav.ts';
import type { Log } from './Logs.tsx';

/** The list's address when the detail was opened (its filters), so "All logs" goes back to the same view. */
let listSearch = '';
export const rememberListSearch = (search: string) => (listSearch = search);

export function LogDetail({ id }: { id: string }) {
  const [log, setLog] = useState<Log | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setLog(null);
    api<Log>('GET', `/logs/${encodeURIComponent(id)}`)
      .then(setLog)
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [id]);
  return (
    <section aria-labelledby="log-title">
      <p>
        <a
          href={`/console/logs${listSearch}`}
          onClick={(e) => {
            e.preventDefault();
            navigate(`logs${listSearch}`);
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
          <Facts log={log} />
          <h2>Attempts (retries and fallbacks)</h2>
          <Attempts attempts={log.attempts} />
          <h2>Hook results</h2>
          <Hooks results={log.hook_results} />
          <h2>Metadata</h2>
          {log.metadata_hidden ? (
            <p>Hidden by the organisation's security settings.</p>
          ) : log.metadata && Object.keys(log.metadata).length ? (
            <dl class="facts">
              {Object.entries(log.metadata).map(([k, v]) => (
                <Fragment key={k}>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </Fragment>
              ))}
            </dl>
          ) : (
            <p>None.</p>
          )}
          <h2>Request body</h2>
          <pre tabIndex={0}>{json(log.request_body)}</pre>
          <h2>Response body</h2>
          <pre tabIndex={0}>{json(log.response_body)}</pre>
        </>
      )}
    </section>
  );
}

function Facts({ log }: { log: Log }) {
  const tokens = [
    ['cache read', log.cache_read_input_tokens],
    ['cache write', log.cache_write_input_tokens],
    ['reasoning', log.reasoning_tokens],
    ['audio in', log.audio_input_tokens],
    ['audio out', log.audio_output_tokens],
    ['image in', log.image_input_tokens],
  ].filter(([, n]) => typeof n === 'number' && n > 0) as [string, number][];
  const facts: [string, preact.ComponentChildren][] = [
    ['Time', time(log.created_at)],
    ['Status', log.status ?? dash],
    ['Endpoint', `${log.endpoint}${log.method ? ` (${log.method} ${log.path ?? ''})` : ''}`],
    ['Provider', log.provider_slug ? `@${log.provider_slug} (${log.provider})` : (log.provider ?? dash)],
    ['Model', log.model ?? dash],
    ['Latency (upstream)', `${log.latency_ms === null ? dash : `${num(log.latency_ms)} ms`} (${log.upstream_latency_ms == null ? dash : `${num(log.upstream_latency_ms)} ms`})`],
    ['Tokens (in / out)', `${num(log.prompt_tokens)} / ${num(log.completion_tokens)}${tokens.length ? ` · ${tokens.map(([k, n]) => `${k} ${num(n)}`).join(', ')}` : ''}`],
    ['Cost', log.priced === false ? `${cents(log.cost_cents)} (not priced)` : cents(log.cost_cents)],
    ['Cache', log.cache_status ?? dash],
    ['Retries · answering target', `${num(log.retry_count)} · ${log.target_index ?? dash}`],
    ['API key', <code>{log.api_key_id}</code>],
    ['Workspace', <code>{log.workspace_id}</code>],
    ['User', log.user_id ? <code>{log.user_id}</code> : dash],
    ['Config', log.config_id ? <code>{log.config_id}</code> : dash],
    ['Prompt', log.prompt_id ? `${log.prompt_id}${log.prompt_version != null ? ` (version ${log.prompt_version})` : ''}` : dash],
    ['Trace id', <code>{log.trace_id}</code>],
  ];
  if (log.error) facts.push(['Error', `${log.error.code ?? ''}: ${log.error.message ?? ''}`]);
  return (
    <dl class="facts">
      {facts.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
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
  const list = attempts as Attempt[];
  return (
    <>
      {/* The path at a glance: each call, a retry of the same target or a fallback to the next. */}
      <ol class="path" aria-label="Retry and fallback path">
        {list.map((a, i) => {
          const prev = list[i - 1];
          const how = !prev ? 'first' : prev.index === a.index ? 'retry' : a.continued ? 'continued' : 'fallback';
          return (
            <li key={i} class={a.status < 400 ? 'ok' : 'bad'}>
              {how !== 'first' && <span class="muted">{how} → </span>}
              <code>{a.index}</code> {a.providerSlug ? `@${a.providerSlug}` : a.providerId} · {a.status}
            </li>
          );
        })}
      </ol>
      <table class="attempts">
        <caption class="sr-only">Provider calls, in the order made</caption>
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
          {list.map((a, i) => (
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
    </>
  );
}

/** A hook's result as the hooks plugin records it (plugins/hooks HookResult). */
interface HookResult {
  id: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  execution_time: number;
  checks: { id: string; verdict: boolean; data: unknown; error: string | null; execution_time: number }[];
}

function Hooks({ results }: { results: unknown }) {
  if (results === null || results === undefined || (Array.isArray(results) && results.length === 0)) return <p>None ran.</p>;
  if (!Array.isArray(results)) return <pre>{json(results)}</pre>;
  return (
    <table class="hooks">
      <caption class="sr-only">Hooks and guardrails run on the call, with their checks</caption>
      <thead>
        <tr>
          {['Hook', 'Verdict', 'Denied', 'Async', 'Time', 'Checks'].map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(results as HookResult[]).map((h, i) => (
          <tr key={i}>
            <td>
              <code>{h.id}</code>
            </td>
            <td class={h.verdict ? 'ok' : 'bad'}>{h.verdict ? 'passed' : 'failed'}</td>
            <td>{h.deny ? 'yes' : 'no'}</td>
            <td>{h.async ? 'yes' : 'no'}</td>
            <td class="num">{num(h.execution_time)} ms</td>
            <td>
              <ul class="checks">
                {(h.checks ?? []).map((c, k) => (
                  <li key={k}>
                    <code>{c.id}</code> <span class={c.verdict ? 'ok' : 'bad'}>{c.verdict ? 'passed' : 'failed'}</span>
                    {c.error ? ` (${c.error})` : ''}
                    {c.data !== null && c.data !== undefined && (
                      <details>
                        <summary>data</summary>
                        <pre>{json(c.data)}</pre>
                      </details>
                    )}
                  </li>
                ))}
              </ul>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
