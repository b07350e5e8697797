/**
 * Saved guardrails (docs/admin/guardrails.md): list, create, edit (the entry as JSON: checks keyed by their id, with
 * `deny`, `async`, `on_fail`, `on_success`), delete. The gateway validates the entry and answers every violation in
 * one message, shown on the form. Workspace guardrails are written by the workspace's managers and admins,
 * organisation-wide ones by organisation admins. Secrets in check parameters come back as `********`; sent back
 * unchanged, they keep the stored value.
 */
import { useState } from 'preact/hooks';
import { api, type Self } from '../api.ts';
import { short, time } from '../format.ts';
import { may, orgAdmin, workspaceWriter } from '../roles.ts';
import { Alert, DataTable, DeleteButton, Field, FormDialog, JsonField, Opener, parseJson, useList } from '../ui.tsx';

interface Guardrail {
  id: string;
  name: string;
  slug: string;
  workspace_id: string | null;
  entry: Record<string, unknown>;
  version: number;
  updated_at: string;
}

const EXAMPLE = { deny: true, 'default.contains': { words: ['codename'], operator: 'none' } };

/** Organisation-wide guardrails are the organisation admins'; a workspace's, its managers' and admins'. */
const mayWrite = (self: Self, g: Guardrail | null, scope: string) => may(self, scope, g?.workspace_id === null ? orgAdmin : workspaceWriter);

export function Guardrails({ self }: { self: Self; sub: string }) {
  const { rows, error, reload } = useList<Guardrail>('/guardrails?page_size=1000');
  return (
    <section aria-labelledby="gr-title">
      <h1 id="gr-title">Guardrails</h1>
      {mayWrite(self, null, 'guardrails.write') && <Opener label="New guardrail">{(close) => <GuardrailForm self={self} onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error} />
      {rows && (
        <DataTable
          caption="Saved guardrails"
          rows={rows}
          columns={[
            ['Name', (g) => g.name],
            ['Slug', (g) => g.slug],
            ['Scope', (g) => (g.workspace_id ? <span title={g.workspace_id}>workspace {short(g.workspace_id)}</span> : 'organisation')],
            ['Checks', (g) => Object.keys(g.entry).filter((k) => !['id', 'deny', 'async', 'on_fail', 'on_success'].includes(k)).join(', ')],
            ['Version', (g) => g.version],
            ['Updated', (g) => time(g.updated_at)],
          ]}
          actions={(g) => (
            <>
              {mayWrite(self, g, 'guardrails.write') && (
                <Opener label="Edit" aria={`Edit guardrail ${g.name}`}>
                  {(close) => <GuardrailForm self={self} guardrail={g} onClose={close} onSaved={reload} />}
                </Opener>
              )}
              {mayWrite(self, g, 'guardrails.delete') && (
                <DeleteButton
                  what={`guardrail ${g.name}`}
                  onDelete={async () => {
                    await api('DELETE', `/guardrails/${g.id}`);
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

function GuardrailForm({ self, guardrail, onClose, onSaved }: { self: Self; guardrail?: Guardrail; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(guardrail?.name ?? '');
  const [slug, setSlug] = useState(guardrail?.slug ?? '');
  const [wide, setWide] = useState(false);
  const [entry, setEntry] = useState(JSON.stringify(guardrail?.entry ?? EXAMPLE, null, 2));
  return (
    <FormDialog
      title={guardrail ? `Edit guardrail ${guardrail.name}` : 'New guardrail'}
      submit={guardrail ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { name, entry: parseJson('Entry', entry) };
        if (slug) body.slug = slug;
        if (guardrail) await api('PUT', `/guardrails/${guardrail.id}`, body);
        else await api('POST', '/guardrails', wide ? { ...body, organisation_id: self.organisation_id } : body);
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} hint="Configs name it by this slug in input_guardrails / output_guardrails." />
      {!guardrail && may(self, 'guardrails.write', orgAdmin) && (
        <label class="inline">
          <input type="checkbox" checked={wide} onChange={(e) => setWide(e.currentTarget.checked)} />
          Organisation-wide (every workspace may use it)
        </label>
      )}
      <JsonField label="Entry (JSON)" rows={10} value={entry} onInput={setEntry} hint="Checks keyed by id (default.contains, default.regexMatch, …) with their parameters; deny, async, on_fail, on_success." />
    </FormDialog>
  );
}
