/**
 * Prompts (docs/admin/prompts.md): list, create, delete; a prompt opens its published template, its versions (publish
 * one), a form for a new version (from the latest, `patch: true`) and a preview: the body `/render` makes from
 * variables. Writing is for the workspace's managers and admins (the security settings' defaults); previewing needs
 * `prompts.read` or `completions.write`.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, can, type Self } from '../api.ts';
import { dash, short, time } from '../format.ts';
import { may, workspaceWriter } from '../roles.ts';
import { Alert, DataTable, DeleteButton, Field, FormDialog, JsonField, Link, message, Opener, parseJson, useList } from '../ui.tsx';

interface PromptSummary {
  id: string;
  name: string;
  slug: string;
  workspace_id: string;
  latest_version: number;
  published_version: number;
  updated_at: string;
}

interface PromptVersion {
  id: string;
  version: number;
  version_description: string | null;
  messages?: unknown[];
  string?: string;
  model: string | null;
  provider: string | null;
  virtual_key: string | null;
  config: string | null;
  created_at: string;
  is_published?: boolean;
}

type Prompt = PromptSummary & PromptVersion;

const EXAMPLE = [
  { role: 'system', content: 'You help {{company}} customers.' },
  { role: 'user', content: '{{question}}' },
];
const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const target = (p: PromptVersion) => p.provider ?? p.virtual_key ?? p.config ?? dash;

export function Prompts({ self, sub }: { self: Self; sub: string }) {
  return sub ? <PromptDetail self={self} id={sub} /> : <PromptList self={self} />;
}

function PromptList({ self }: { self: Self }) {
  const { rows, error, reload } = useList<PromptSummary>('/prompts?page_size=1000');
  return (
    <section aria-labelledby="pr-title">
      <h1 id="pr-title">Prompts</h1>
      {may(self, 'prompts.write', workspaceWriter) && <Opener label="New prompt">{(close) => <PromptForm onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error} />
      {rows && (
        <DataTable
          caption="Prompts"
          rows={rows}
          columns={[
            ['Name', (p) => <Link to={`prompts/${p.id}`}>{p.name}</Link>],
            ['Slug', (p) => p.slug],
            ['Workspace', (p) => <span title={p.workspace_id}>{short(p.workspace_id)}</span>],
            ['Published', (p) => `version ${p.published_version}`],
            ['Latest', (p) => `version ${p.latest_version}`],
            ['Updated', (p) => time(p.updated_at)],
          ]}
          actions={
            may(self, 'prompts.delete', workspaceWriter)
              ? (p) => (
                  <DeleteButton
                    what={`prompt ${p.name}`}
                    onDelete={async () => {
                      await api('DELETE', `/prompts/${p.id}`);
                      reload();
                    }}
                  />
                )
              : undefined
          }
        />
      )}
    </section>
  );
}

/** A new prompt, or (with `prompt`) a new version of it made from its latest version and the fields given. */
function PromptForm({ prompt, onClose, onSaved }: { prompt?: Prompt; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [provider, setProvider] = useState(prompt?.provider ?? '');
  const [model, setModel] = useState(prompt?.model ?? '');
  const [messages, setMessages] = useState(pretty(prompt?.messages ?? EXAMPLE));
  const [description, setDescription] = useState('');
  return (
    <FormDialog
      title={prompt ? `New version of ${prompt.name}` : 'New prompt'}
      submit={prompt ? 'Save version' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { messages: parseJson('Messages', messages), model: model || undefined, version_description: description || undefined };
        if (provider) body.provider = provider;
        if (prompt) await api('PUT', `/prompts/${prompt.id}`, { ...body, patch: true });
        else await api('POST', '/prompts', { ...body, name, ...(slug ? { slug } : {}) });
        onSaved();
      }}
    >
      {!prompt && <Field label="Name" required value={name} onInput={setName} />}
      {!prompt && <Field label="Slug" value={slug} onInput={setSlug} />}
      <Field label="Provider (@slug)" required={!prompt} value={provider} onInput={setProvider} hint="A stored provider or integration of the workspace, as @slug." />
      <Field label="Model" value={model} onInput={setModel} />
      <JsonField label="Messages (JSON, Mustache templates)" rows={8} value={messages} onInput={setMessages} />
      <Field label="Version description" value={description} onInput={setDescription} />
    </FormDialog>
  );
}

function PromptDetail({ self, id }: { self: Self; id: string }) {
  const path = `/prompts/${encodeURIComponent(id)}`;
  const [prompt, setPrompt] = useState<Prompt | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const { rows: versions, reload } = useList<PromptVersion>(`${path}/versions?page_size=100`);
  const write = may(self, 'prompts.write', workspaceWriter);
  useEffect(() => {
    api<Prompt>('GET', path)
      .then(setPrompt)
      .catch((e) => setError(message(e)));
  }, [path, tick]);
  const changed = () => {
    setTick((t) => t + 1);
    reload();
  };
  const publish = async (version: number) => {
    setError(null);
    try {
      await api('PUT', `${path}/makeDefault`, { version });
      changed();
    } catch (e) {
      setError(message(e));
    }
  };
  return (
    <section aria-labelledby="pr-title">
      <p>
        <Link to="prompts">← All prompts</Link>
      </p>
      <h1 id="pr-title">{prompt ? `Prompt ${prompt.name}` : 'Prompt'}</h1>
      <Alert text={error} />
      {prompt && (
        <div class="editor">
          <div class="stack">
            <dl class="facts">
              <dt>Slug</dt>
              <dd>{prompt.slug}</dd>
              <dt>Published version</dt>
              <dd>{prompt.published_version}</dd>
              <dt>Target</dt>
              <dd>{target(prompt)}</dd>
              <dt>Model</dt>
              <dd>{prompt.model ?? dash}</dd>
            </dl>
            <h2>Template</h2>
            <pre aria-label="Template of the published version">{prompt.messages ? pretty(prompt.messages) : (prompt.string ?? '')}</pre>
            {write && (
              <div class="row">
                <Opener label="New version">{(close) => <PromptForm prompt={prompt} onClose={close} onSaved={changed} />}</Opener>
              </div>
            )}
            {(can(self, 'prompts.read') || can(self, 'completions.write')) && <Preview path={path} />}
          </div>
          <div>
            <h2>Versions</h2>
            {versions && (
              <DataTable
                caption="Versions of the prompt, newest first"
                rows={versions}
                columns={[
                  ['Version', (v) => v.version],
                  ['Description', (v) => v.version_description ?? dash],
                  ['Created', (v) => time(v.created_at)],
                  ['Published', (v) => (v.version === prompt.published_version ? 'yes' : '')],
                ]}
                actions={
                  write
                    ? (v) =>
                        v.version !== prompt.published_version && (
                          <button type="button" aria-label={`Publish version ${v.version}`} onClick={() => publish(v.version)}>
                            Publish
                          </button>
                        )
                    : undefined
                }
              />
            )}
          </div>
        </div>
      )}
    </section>
  );
}

/** POST /prompts/:id/render: the body the template makes from the variables, without calling a model. */
function Preview({ path }: { path: string }) {
  const [variables, setVariables] = useState(pretty({ company: 'Acme', question: 'Where is my order?' }));
  const [version, setVersion] = useState('');
  const [rendered, setRendered] = useState<unknown>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="stack"
      aria-label="Preview"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        setRendered(null);
        try {
          const suffix = version ? `@${version}` : '';
          const answer = await api<{ data: unknown }>('POST', `${path}${suffix}/render`, { variables: parseJson('Variables', variables) });
          setRendered(answer.data);
        } catch (err) {
          setError(message(err));
        }
      }}
    >
      <h2>Preview</h2>
      <JsonField label="Variables (JSON)" rows={4} value={variables} onInput={setVariables} />
      <Field label="Version (empty: the published one)" value={version} onInput={setVersion} />
      <button type="submit">Render</button>
      <Alert text={error} />
      {rendered !== null && (
        <pre aria-label="Rendered body" aria-live="polite">
          {pretty(rendered)}
        </pre>
      )}
    </form>
  );
}

