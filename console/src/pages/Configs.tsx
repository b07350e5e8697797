import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Page, type Self } from '../api.ts';
import { diffLines } from '../diff.ts';
import { short, time } from '../format.ts';
import { navigate } from '../nav.ts';
import { may, workspaceWriter } from '../roles.ts';
import { DeleteButton, Field, FormDialog, JsonField, Opener, parseJson } from '../ui.tsx';

interface Config {
  id: string;
  name: string;
  slug: string;
  workspace_id: string;
  is_default: boolean;
  version: number;
  current_version: number;
  config: Record<string, unknown>;
  updated_at: string;
}

interface Version {
  version: number;
  config: Record<string, unknown>;
  created_at: string;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

export function Configs({ self, sub }: { self: Self; sub: string }) {
  return sub ? <ConfigEditor self={self} id={sub} /> : <ConfigList self={self} />;
}

function ConfigList({ self }: { self: Self }) {
  const [configs, setConfigs] = useState<Config[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api<Page<Config>>('GET', '/configs?page_size=100')
      .then((p) => setConfigs(p.data))
      .catch((e) => setError(message(e)));
  }, [tick]);
  const reload = () => setTick((t) => t + 1);
  return (
    <section aria-labelledby="cfg-title">
      <h1 id="cfg-title">Configs</h1>
      {may(self, 'configs.write', workspaceWriter) && <Opener label="New config">{(close) => <NewConfig onClose={close} onSaved={reload} />}</Opener>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {configs && configs.length === 0 && <p>No saved configs.</p>}
      {configs && configs.length > 0 && (
        <table>
          <thead>
            <tr>
              {['Name', 'Slug', 'Workspace', 'Version', 'Default', 'Updated', ...(may(self, 'configs.delete', workspaceWriter) ? ['Actions'] : [])].map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {configs.map((c) => (
              <tr key={c.id}>
                <td>
                  <a
                    href={`/console/configs/${c.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`configs/${c.id}`);
                    }}
                  >
                    {c.name}
                  </a>
                </td>
                <td>{c.slug}</td>
                <td title={c.workspace_id}>{short(c.workspace_id)}</td>
                <td class="num">{c.version}</td>
                <td>{c.is_default ? 'yes' : ''}</td>
                <td>{time(c.updated_at)}</td>
                {may(self, 'configs.delete', workspaceWriter) && (
                  <td class="actions">
                    <DeleteButton
                      what={`config ${c.name}`}
                      onDelete={async () => {
                        await api('DELETE', `/configs/${c.id}`);
                        reload();
                      }}
                    />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A new saved config: name, slug and the JSON, which the gateway validates (every violation in its refusal). */
function NewConfig({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [text, setText] = useState(pretty({ retry: { attempts: 2 }, provider: '@your-provider' }));
  return (
    <FormDialog
      title="New config"
      submit="Create"
      onClose={onClose}
      onSubmit={async () => {
        await api('POST', '/configs', { name, ...(slug ? { slug } : {}), config: parseJson('Config', text) });
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} hint="Requests name it in x-gateway-config; made from the name when empty." />
      <JsonField label="Config (JSON)" rows={10} value={text} onInput={setText} />
    </FormDialog>
  );
}

function ConfigEditor({ self, id }: { self: Self; id: string }) {
  const mayWrite = may(self, 'configs.write', workspaceWriter);
  const [config, setConfig] = useState<Config | null>(null);
  const [versions, setVersions] = useState<Version[]>([]);
  const [text, setText] = useState('');
  const [syntax, setSyntax] = useState<string | null>(null);
  const [violations, setViolations] = useState<string[] | null>(null);
  const [compare, setCompare] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();

  useEffect(() => {
    const path = `/configs/${encodeURIComponent(id)}`;
    api<Config>('GET', path)
      .then((c) => {
        setConfig(c);
        setText(pretty(c.config));
        setViolations(null);
      })
      .catch((e) => setError(message(e)));
    api<Page<Version>>('GET', `${path}/versions?page_size=100`)
      .then((p) => setVersions(p.data))
      .catch(() => setVersions([]));
  }, [id, tick]);

  // Live validation: JSON syntax at once, then the gateway's own validation (a dry run) once typing pauses.
  const edit = (value: string) => {
    setText(value);
    setSaved(null);
    clearTimeout(timer.current);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
      setSyntax(null);
    } catch (e) {
      setSyntax(e instanceof Error ? e.message : String(e));
      setViolations(null);
      return;
    }
    if (!mayWrite) return;
    timer.current = setTimeout(() => {
      api<{ violations: string[] }>('POST', `/configs/${encodeURIComponent(id)}/validate`, { config: parsed })
        .then((r) => setViolations(r.violations))
        .catch((e) => setError(message(e)));
    }, 400);
  };

  const save = async () => {
    setError(null);
    try {
      const updated = await api<Config>('PUT', `/configs/${encodeURIComponent(id)}`, { config: JSON.parse(text) });
      setSaved(`Saved as version ${updated.version}.`);
      setTick((t) => t + 1);
    } catch (e) {
      setError(message(e));
    }
  };

  const older = versions.find((v) => v.version === compare);
  return (
    <section aria-labelledby="cfg-title">
      <p>
        <a
          href="/console/configs"
          onClick={(e) => {
            e.preventDefault();
            navigate('configs');
          }}
        >
          ← All configs
        </a>
      </p>
      <h1 id="cfg-title">{config ? `Config ${config.name}` : 'Config'}</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {config && (
        <div class="editor">
          <div class="stack">
            <label for="config-json">Config (JSON), version {config.version}</label>
            <textarea
              id="config-json"
              rows={18}
              spellcheck={false}
              readOnly={!mayWrite}
              aria-describedby="config-check"
              aria-invalid={syntax !== null || (violations?.length ?? 0) > 0}
              value={text}
              onInput={(e) => edit(e.currentTarget.value)}
            />
            <div id="config-check" aria-live="polite">
              {syntax ? (
                <p class="error">JSON: {syntax}</p>
              ) : violations === null ? null : violations.length === 0 ? (
                <p class="ok">Valid.</p>
              ) : (
                <ul class="error violations">
                  {violations.map((v) => (
                    <li key={v}>{v}</li>
                  ))}
                </ul>
              )}
            </div>
            {mayWrite && (
              <button type="button" class="primary" disabled={syntax !== null || (violations?.length ?? 0) > 0} onClick={save}>
                Save as a new version
              </button>
            )}
            {saved && <p role="status">{saved}</p>}
            <p class="hint">Secrets show as ******** and are kept when sent back unchanged.</p>
          </div>
          <div>
            <h2>Versions</h2>
            <label>
              Compare the editor with
              <select value={compare ?? ''} onChange={(e) => setCompare(e.currentTarget.value ? Number(e.currentTarget.value) : null)}>
                <option value="">no version</option>
                {versions.map((v) => (
                  <option key={v.version} value={v.version}>
                    version {v.version} · {time(v.created_at)}
                  </option>
                ))}
              </select>
            </label>
            {older && (
              <pre class="diff" aria-label={`Differences from version ${older.version}`}>
                {diffLines(pretty(older.config), text).map((line, i) => (
                  <div key={i} class={line.kind}>
                    {line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  '}
                    {line.text}
                  </div>
                ))}
              </pre>
            )}
          </div>
        </div>
      )}
    </section>
  );
}
