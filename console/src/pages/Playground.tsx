import { useEffect, useState } from 'preact/hooks';
import { api, call, can, type Page, type Self } from '../api.ts';
import { cents, dash, num } from '../format.ts';
import { navigate } from '../nav.ts';
import type { Log } from './Logs.tsx';

interface Named {
  id: string;
  slug: string;
  name?: string;
}

/** Lists the playground offers, each fetched only when the key holds its scope. */
function useList(self: Self, scope: string, path: string): Named[] {
  const [items, setItems] = useState<Named[]>([]);
  useEffect(() => {
    if (!can(self, scope)) return;
    api<Page<Named>>('GET', path)
      .then((p) => setItems(p.data))
      .catch(() => setItems([]));
  }, [self, scope, path]);
  return items;
}

/** The text of an OpenAI-shaped server-sent event stream, as it arrives. */
async function readStream(response: Response, onText: (text: string) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') continue;
        try {
          const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
          text += chunk.choices?.[0]?.delta?.content ?? '';
          onText(text);
        } catch {
          // A comment or a keep-alive: nothing to show.
        }
      }
    }
  }
}

export function Playground({ self }: { self: Self; sub: string }) {
  const providers = useList(self, 'providers.read', '/providers');
  const configs = useList(self, 'configs.read', '/configs');
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  const [config, setConfig] = useState('');
  const [message, setMessage] = useState('Say hello.');
  const [stream, setStream] = useState(true);
  const [answer, setAnswer] = useState('');
  const [status, setStatus] = useState<number | null>(null);
  const [headers, setHeaders] = useState<[string, string][]>([]);
  const [log, setLog] = useState<Log | null | 'waiting' | 'none'>(null);
  const [busy, setBusy] = useState(false);

  const send = async () => {
    setBusy(true);
    setAnswer('');
    setLog(null);
    const extra: Record<string, string> = {};
    if (config) extra['x-gateway-config'] = config;
    const body = { model: provider ? `@${provider}/${model}` : model, stream, messages: [{ role: 'user', content: message }] };
    try {
      const response = await call('POST', '/chat/completions', body, extra);
      setStatus(response.status);
      setHeaders([...response.headers].filter(([name]) => name.startsWith('x-gateway-')));
      const type = response.headers.get('content-type') ?? '';
      if (response.ok && type.includes('text/event-stream')) await readStream(response, setAnswer);
      else {
        const json = (await response.json().catch(() => null)) as { choices?: { message?: { content?: string } }[]; error?: { message?: string } } | null;
        setAnswer(json?.choices?.[0]?.message?.content ?? json?.error?.message ?? '');
      }
      const trace = response.headers.get('x-gateway-trace-id');
      if (trace && can(self, 'logs.read')) await findLog(trace);
    } finally {
      setBusy(false);
    }
  };

  // The request log is written after the answer, through a queue: asked again for a few seconds.
  const findLog = async (trace: string) => {
    setLog('waiting');
    for (let i = 0; i < 20; i++) {
      const page = await api<Page<Log>>('GET', `/logs?limit=1&trace_id=${encodeURIComponent(trace)}`).catch(() => null);
      const row = page?.data[0];
      if (row) return setLog(row);
      await new Promise((r) => setTimeout(r, 500));
    }
    setLog('none');
  };

  return (
    <section aria-labelledby="pg-title">
      <h1 id="pg-title">Playground</h1>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <div class="row">
          {providers.length > 0 && (
            <label>
              Stored provider
              <select value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
                <option value="">none</option>
                {providers.map((p) => (
                  <option key={p.id} value={p.slug}>
                    @{p.slug}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            Model
            <input required value={model} placeholder={provider ? 'gpt-4o-mini' : '@slug/gpt-4o-mini'} onInput={(e) => setModel(e.currentTarget.value)} />
          </label>
          {configs.length > 0 && (
            <label>
              Config
              <select value={config} onChange={(e) => setConfig(e.currentTarget.value)}>
                <option value="">none</option>
                {configs.map((c) => (
                  <option key={c.id} value={c.slug}>
                    {c.name ?? c.slug}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label class="inline">
            <input type="checkbox" checked={stream} onChange={(e) => setStream(e.currentTarget.checked)} /> Stream
          </label>
        </div>
        <label>
          Message
          <textarea rows={4} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      {status !== null && (
        <>
          <h2>
            Answer <span class={status < 400 ? 'ok' : 'bad'}>HTTP {status}</span>
          </h2>
          <output class="answer" aria-live="polite">
            {answer || dash}
          </output>
          <h2>Gateway headers</h2>
          <table class="kv">
            <tbody>
              {headers.map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">{k}</th>
                  <td>
                    <code>{v}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {log !== null && (
        <>
          <h2>Log row</h2>
          {log === 'waiting' ? (
            <p>Waiting for the request log…</p>
          ) : log === 'none' ? (
            <p>The log row has not appeared yet.</p>
          ) : (
            <p class="logrow">
              <a
                href={`/console/logs/${log.id}`}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(`logs/${log.id}`);
                }}
              >
                Log {log.id}
              </a>{' '}
              · status {log.status ?? dash} · {log.provider ?? dash} · {log.model ?? dash} · {num(log.latency_ms)} ms · {num(log.total_tokens)} tokens · {cents(log.cost_cents)}
            </p>
          )}
        </>
      )}
    </section>
  );
}
