/**
 * The logs' saved filters (docs/admin/settings.md "Saved filters"): pick one to filter the table by its values, and,
 * with `logs.write`, save the filters shown under a name (the organisation's for organisation admins, else the key's
 * workspace's). A moving time window is not saved (a saved filter holds fixed values); a fixed range is.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, can, type Page, type Self } from '../api.ts';
import { FILTER_FIELDS, type LogView } from '../logFilters.ts';

interface SavedFilter {
  id: string;
  name: string;
  workspace_id: string | null;
  filters: Record<string, string>;
}

/** An ISO time as a datetime-local value (the browser's local time, seconds). */
function localOf(iso: string | undefined): string {
  const d = new Date(iso ?? '');
  if (!iso || Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

/** The view a saved filter's values make (its time bounds a fixed range). */
function viewOf(saved: SavedFilter, live: boolean): LogView {
  const filters: Record<string, string> = {};
  for (const f of FILTER_FIELDS) if (saved.filters[f.name]) filters[f.name] = saved.filters[f.name] as string;
  const from = localOf(saved.filters.time_of_generation_min);
  const to = localOf(saved.filters.time_of_generation_max);
  return { filters, since: from || to ? 'range' : 'any', from, to, live };
}

/** The values of a view a saved filter keeps. */
function valuesOf(view: LogView): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of FILTER_FIELDS) {
    const v = view.filters[f.name]?.trim();
    if (v) out[f.name] = v;
  }
  if (view.since === 'range') {
    for (const [param, local] of [
      ['time_of_generation_min', view.from],
      ['time_of_generation_max', view.to],
    ] as const) {
      const d = new Date(local);
      if (local && !Number.isNaN(d.getTime())) out[param] = d.toISOString();
    }
  }
  return out;
}

export function SavedFilters({ self, view, onApply }: { self: Self; view: LogView; onApply: (v: LogView) => void }) {
  const [saved, setSaved] = useState<SavedFilter[]>([]);
  const [chosen, setChosen] = useState('');
  const [name, setName] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const load = () =>
    api<Page<SavedFilter>>('GET', '/logs/saved-filters?page_size=100')
      .then((p) => setSaved(p.data))
      .catch(() => setSaved([]));
  useEffect(() => {
    load();
  }, []);
  const orgWide = self.type === 'organisation-service' || self.organisation_role === 'owner' || self.organisation_role === 'admin';
  const values = valuesOf(view);

  return (
    <div class="saved-filters">
      <label>
        Saved filter
        <select
          value={chosen}
          onChange={(e) => {
            const id = e.currentTarget.value;
            setChosen(id);
            const picked = saved.find((s) => s.id === id);
            if (picked) onApply(viewOf(picked, view.live));
          }}
        >
          <option value="">{saved.length ? 'choose…' : 'none saved'}</option>
          {saved.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      {can(self, 'logs.write') && (
        <form
          class="inline-form"
          aria-label="Save the filters"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              const made = await api<SavedFilter>('POST', '/logs/saved-filters', {
                name: name.trim(),
                ...(orgWide ? {} : { workspace_id: self.workspace_id }),
                filters: values,
              });
              setMessage({ ok: true, text: `Saved as “${made.name}”.` });
              setName('');
              await load();
              setChosen(made.id);
            } catch (error) {
              setMessage({ ok: false, text: error instanceof ApiError ? error.message : String(error) });
            }
          }}
        >
          <label>
            Save these filters as
            <input value={name} required maxLength={255} placeholder="Red team errors" onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={!name.trim() || Object.keys(values).length === 0}>
            Save
          </button>
        </form>
      )}
      {message && (
        <p role={message.ok ? 'status' : 'alert'} class={message.ok ? 'ok' : 'error'}>
          {message.text}
        </p>
      )}
    </div>
  );
}
