/**
 * Integrations, providers and virtual keys (docs/admin/integrations.md): list, create, edit, delete. Credentials are
 * never shown back: the gateway answers them masked (`****abcd`), and the key is a write-only field, empty unless a
 * new key is to replace the stored one. `configurations` are shown as the gateway masks them; a masked value sent back
 * unchanged keeps the stored secret. Integrations are the organisation admins' (the page is only theirs, main.tsx);
 * providers and virtual keys are written by the workspace's managers and admins.
 */
import { useState } from 'preact/hooks';
import { api, can, type Self } from '../api.ts';
import { dash, time } from '../format.ts';
import { may, orgAdmin, workspaceWriter } from '../roles.ts';
import { Alert, DataTable, DeleteButton, Field, FormDialog, JsonField, Opener, parseJson, useList } from '../ui.tsx';

interface Integration {
  id: string;
  name: string;
  slug: string;
  ai_provider_id: string;
  description: string | null;
  key: string | null;
  configurations: Record<string, unknown>;
  status: string;
  last_updated_at: string;
}

interface Provider {
  id: string;
  name: string;
  slug: string;
  integration_slug: string;
  ai_provider_id: string;
  note: string | null;
  status: string;
}

interface VirtualKey {
  id: string;
  name: string;
  slug: string;
  provider: string;
  key: string | null;
  configurations: Record<string, unknown>;
  note: string | null;
  status: string;
}

interface Workspace {
  id: string;
  slug: string;
  name: string;
}

const pretty = (v: unknown) => JSON.stringify(v ?? {}, null, 2);
/** Provider ids offered as suggestions (any loaded provider id is accepted). */
const KNOWN = ['openai', 'anthropic', 'azure-openai', 'bedrock', 'vertex-ai', 'google', 'mistral-ai', 'groq', 'ollama'];

function ProviderIds() {
  return (
    <datalist id="provider-ids">
      {KNOWN.map((p) => (
        <option key={p} value={p} />
      ))}
    </datalist>
  );
}

/** The write-only key field: empty means "keep the stored key". */
function SecretField({ stored, value, onInput }: { stored?: string | null; value: string; onInput: (v: string) => void }) {
  return (
    <Field
      label={stored === undefined ? 'API key' : 'New API key'}
      type="password"
      autocomplete="new-password"
      value={value}
      onInput={onInput}
      hint={stored === undefined ? 'Write-only: it is never shown again.' : `Stored: ${stored ?? 'none'}. Leave empty to keep it; write-only.`}
    />
  );
}

export function Integrations({ self }: { self: Self; sub: string }) {
  const { rows, error, reload } = useList<Integration>('/integrations?page_size=1000');
  return (
    <section aria-labelledby="int-title">
      <h1 id="int-title">Integrations</h1>
      {can(self, 'integrations.write') && <Opener label="New integration">{(close) => <IntegrationForm self={self} onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error} />
      {rows && (
        <DataTable
          caption="Integrations"
          rows={rows}
          columns={[
            ['Name', (i) => i.name],
            ['Slug', (i) => i.slug],
            ['Provider', (i) => i.ai_provider_id],
            ['Key (masked)', (i) => <code>{i.key ?? dash}</code>],
            ['Status', (i) => i.status],
            ['Updated', (i) => time(i.last_updated_at)],
          ]}
          actions={(i) => (
            <>
              {can(self, 'integrations.write') && (
                <Opener label="Edit" aria={`Edit ${i.name}`}>
                  {(close) => <IntegrationForm self={self} integration={i} onClose={close} onSaved={reload} />}
                </Opener>
              )}
              {can(self, 'integrations.write') && can(self, 'workspaces.read') && (
                <Opener label="Workspaces" aria={`Workspaces of ${i.name}`}>
                  {(close) => <AccessForm integration={i} onClose={close} />}
                </Opener>
              )}
              {can(self, 'integrations.delete') && (
                <DeleteButton
                  what={`integration ${i.name}`}
                  onDelete={async () => {
                    await api('DELETE', `/integrations/${i.id}`);
                    reload();
                  }}
                />
              )}
            </>
          )}
        />
      )}
    </section>
  );
}

function IntegrationForm({ self, integration, onClose, onSaved }: { self: Self; integration?: Integration; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(integration?.name ?? '');
  const [slug, setSlug] = useState(integration?.slug ?? '');
  const [provider, setProvider] = useState(integration?.ai_provider_id ?? 'openai');
  const [key, setKey] = useState('');
  const [description, setDescription] = useState(integration?.description ?? '');
  const [configurations, setConfigurations] = useState(pretty(integration?.configurations));
  // A new integration is given to workspaces at once (each gets a provider of its slug); the list needs workspaces.read.
  const { rows: workspaces } = useList<Workspace>(!integration && can(self, 'workspaces.read') ? '/workspaces?page_size=1000' : null);
  const [given, setGiven] = useState<string[]>([self.workspace_id]);
  return (
    <FormDialog
      title={integration ? `Edit integration ${integration.name}` : 'New integration'}
      submit={integration ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { name, description: description || null, configurations: parseJson('Configurations', configurations) };
        if (slug) body.slug = slug;
        if (key) body.key = key;
        if (integration) await api('PUT', `/integrations/${integration.id}`, body);
        else await api('POST', '/integrations', { ...body, ai_provider_id: provider, workspaces: given.map((id) => ({ id })) });
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} hint={integration ? undefined : 'Optional: made from the name.'} />
      {!integration && <Field label="Provider id" required list="provider-ids" value={provider} onInput={setProvider} hint="It cannot change later." />}
      <ProviderIds />
      <SecretField stored={integration ? integration.key : undefined} value={key} onInput={setKey} />
      <Field label="Description" value={description} onInput={setDescription} />
      <JsonField
        label="Configurations (JSON)"
        rows={5}
        value={configurations}
        onInput={setConfigurations}
        hint='For example {"custom_host": "https://llm.example.com/v1"}. Masked values sent back unchanged keep the stored secret.'
      />
      {workspaces && workspaces.length > 0 && (
        <fieldset>
          <legend>Workspaces given access</legend>
          {workspaces.map((w) => (
            <label key={w.id} class="inline">
              <input
                type="checkbox"
                checked={given.includes(w.id)}
                onChange={(e) => setGiven(e.currentTarget.checked ? [...given, w.id] : given.filter((g) => g !== w.id))}
              />
              {w.name}
            </label>
          ))}
        </fieldset>
      )}
    </FormDialog>
  );
}

interface Access {
  id: string;
  enabled: boolean;
}

/**
 * Which workspaces may use the integration (GET / PUT /integrations/:id/workspaces): every workspace of the
 * organisation with a box; only the changed ones are sent. A newly enabled workspace gets the default provider.
 */
function AccessForm({ integration, onClose }: { integration: Integration; onClose: () => void }) {
  const { rows: workspaces } = useList<Workspace>('/workspaces?page_size=1000');
  const { rows: access } = useList<Access>(`/integrations/${integration.id}/workspaces?page_size=1000`);
  const [changed, setChanged] = useState<Record<string, boolean>>({});
  const enabled = (id: string) => changed[id] ?? access?.some((a) => a.id === id && a.enabled) ?? false;
  return (
    <FormDialog
      title={`Workspaces of ${integration.name}`}
      submit="Save"
      onClose={onClose}
      onSubmit={async () => {
        const entries = Object.entries(changed).map(([id, on]) => ({ id, enabled: on }));
        if (entries.length) await api('PUT', `/integrations/${integration.id}/workspaces`, { workspaces: entries });
      }}
    >
      {workspaces && access ? (
        <fieldset>
          <legend>Workspaces that may use it</legend>
          {workspaces.map((w) => (
            <label key={w.id} class="inline">
              <input type="checkbox" checked={enabled(w.id)} onChange={(e) => setChanged({ ...changed, [w.id]: e.currentTarget.checked })} />
              {w.name}
            </label>
          ))}
        </fieldset>
      ) : (
        <p>Loading…</p>
      )}
      <p class="hint">Disabling keeps the workspace's providers; their requests are then refused (403).</p>
    </FormDialog>
  );
}

export function Providers({ self }: { self: Self; sub: string }) {
  const { rows, error, reload } = useList<Provider>('/providers?page_size=1000');
  const write = may(self, 'providers.write', workspaceWriter);
  return (
    <section aria-labelledby="prov-title">
      <h1 id="prov-title">Providers</h1>
      {write && <Opener label="New provider">{(close) => <ProviderForm self={self} onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error} />
      {rows && (
        <DataTable
          caption="Providers of the workspace"
          rows={rows}
          columns={[
            ['Slug', (p) => `@${p.slug}`],
            ['Name', (p) => p.name],
            ['Integration', (p) => p.integration_slug],
            ['Provider', (p) => p.ai_provider_id],
            ['Note', (p) => p.note ?? dash],
            ['Status', (p) => p.status],
          ]}
          actions={(p) => (
            <>
              {write && (
                <Opener label="Edit" aria={`Edit provider ${p.slug}`}>
                  {(close) => <ProviderForm self={self} provider={p} onClose={close} onSaved={reload} />}
                </Opener>
              )}
              {may(self, 'providers.delete', workspaceWriter) && (
                <DeleteButton
                  what={`provider @${p.slug}`}
                  onDelete={async () => {
                    await api('DELETE', `/providers/${p.id}`);
                    reload();
                  }}
                />
              )}
            </>
          )}
        />
      )}
    </section>
  );
}

function ProviderForm({ self, provider, onClose, onSaved }: { self: Self; provider?: Provider; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(provider?.name ?? '');
  const [slug, setSlug] = useState(provider?.slug ?? '');
  const [integration, setIntegration] = useState('');
  const [note, setNote] = useState(provider?.note ?? '');
  // Only organisation admins may list integrations; others type the integration's slug.
  const { rows: integrations } = useList<Integration>(!provider && may(self, 'integrations.read', orgAdmin) ? '/integrations?page_size=1000' : null);
  return (
    <FormDialog
      title={provider ? `Edit provider @${provider.slug}` : 'New provider'}
      submit={provider ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { name, note: note || null };
        if (slug) body.slug = slug;
        if (provider) await api('PUT', `/providers/${provider.id}`, body);
        else await api('POST', '/providers', { ...body, integration_id: integration });
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} hint={provider ? undefined : 'Requests name it as @slug; made from the name when empty.'} />
      {!provider && <Field label="Integration (slug or id)" required list="integration-slugs" value={integration} onInput={setIntegration} />}
      {integrations && (
        <datalist id="integration-slugs">
          {integrations.map((i) => (
            <option key={i.id} value={i.slug}>
              {i.name}
            </option>
          ))}
        </datalist>
      )}
      <Field label="Note" value={note} onInput={setNote} />
    </FormDialog>
  );
}

export function VirtualKeys({ self }: { self: Self; sub: string }) {
  const { rows, error, reload } = useList<VirtualKey>('/virtual-keys?page_size=1000');
  const write = may(self, 'virtual_keys.write', workspaceWriter);
  return (
    <section aria-labelledby="vk-title">
      <h1 id="vk-title">Virtual keys</h1>
      {write && <Opener label="New virtual key">{(close) => <VirtualKeyForm onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error} />
      {rows && (
        <DataTable
          caption="Virtual keys of the workspace"
          rows={rows}
          columns={[
            ['Name', (v) => v.name],
            ['Slug', (v) => v.slug],
            ['Provider', (v) => v.provider],
            ['Key (masked)', (v) => <code>{v.key ?? dash}</code>],
            ['Note', (v) => v.note ?? dash],
            ['Status', (v) => v.status],
          ]}
          actions={(v) => (
            <>
              {write && (
                <Opener label="Edit" aria={`Edit virtual key ${v.slug}`}>
                  {(close) => <VirtualKeyForm virtualKey={v} onClose={close} onSaved={reload} />}
                </Opener>
              )}
              {may(self, 'virtual_keys.delete', workspaceWriter) && (
                <DeleteButton
                  what={`virtual key ${v.slug}`}
                  onDelete={async () => {
                    await api('DELETE', `/virtual-keys/${v.id}`);
                    reload();
                  }}
                />
              )}
            </>
          )}
        />
      )}
    </section>
  );
}

function VirtualKeyForm({ virtualKey, onClose, onSaved }: { virtualKey?: VirtualKey; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(virtualKey?.name ?? '');
  const [slug, setSlug] = useState(virtualKey?.slug ?? '');
  const [provider, setProvider] = useState(virtualKey?.provider ?? 'openai');
  const [key, setKey] = useState('');
  const [note, setNote] = useState(virtualKey?.note ?? '');
  const [configurations, setConfigurations] = useState(pretty(virtualKey?.configurations));
  return (
    <FormDialog
      title={virtualKey ? `Edit virtual key ${virtualKey.slug}` : 'New virtual key'}
      submit={virtualKey ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { name, note: note || null, configurations: parseJson('Configurations', configurations) };
        if (slug) body.slug = slug;
        if (key) body.key = key;
        if (virtualKey) await api('PUT', `/virtual-keys/${virtualKey.id}`, body);
        else await api('POST', '/virtual-keys', { ...body, provider });
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} />
      {!virtualKey && <Field label="Provider id" required list="provider-ids" value={provider} onInput={setProvider} />}
      <ProviderIds />
      <SecretField stored={virtualKey ? virtualKey.key : undefined} value={key} onInput={setKey} />
      <Field label="Note" value={note} onInput={setNote} />
      <JsonField label="Configurations (JSON)" rows={4} value={configurations} onInput={setConfigurations} hint="Masked values sent back unchanged keep the stored secret." />
    </FormDialog>
  );
}
