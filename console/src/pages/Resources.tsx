/**
 * Read-only lists of the administration resources (workspaces and their members, integrations, providers, virtual
 * keys, guardrails, prompts): what the gateway answers, secrets as it masks them. Each is a page of its own, shown
 * and fetched only with its read scope (main.tsx); a workspace's members only with `workspace_users.read`.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, can, type Page, type Self } from '../api.ts';
import { dash, short, time } from '../format.ts';
import { navigate } from '../nav.ts';

type Row = Record<string, unknown>;
type Column = [label: string, cell: (row: Row) => string];

const text = (key: string) => (row: Row) => (row[key] === null || row[key] === undefined ? dash : String(row[key]));
const id = (key: string) => (row: Row) => short(row[key] as string | null);
const at = (key: string) => (row: Row) => time(row[key] as string | null);

function useList(path: string): { rows: Row[] | null; error: string | null } {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setRows(null);
    api<Page<Row>>('GET', path)
      .then((p) => setRows(p.data))
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [path]);
  return { rows, error };
}

function Table({ title, path, columns, link }: { title: string; path: string; columns: Column[]; link?: (row: Row) => string }) {
  const { rows, error } = useList(path);
  const slug = title.toLowerCase().replace(/\W+/g, '-');
  return (
    <section aria-labelledby={`${slug}-title`}>
      <h1 id={`${slug}-title`}>{title}</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {rows && rows.length === 0 && <p>None.</p>}
      {rows && rows.length > 0 && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                {columns.map(([label]) => (
                  <th key={label} scope="col">
                    {label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row, i) => (
                <tr key={String(row.id ?? i)}>
                  {columns.map(([label, cell], c) => (
                    <td key={label}>
                      {c === 0 && link ? (
                        <a
                          href={`/console/${link(row)}`}
                          onClick={(e) => {
                            e.preventDefault();
                            navigate(link(row));
                          }}
                        >
                          {cell(row)}
                        </a>
                      ) : (
                        cell(row)
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function Workspaces({ self, sub }: { self: Self; sub: string }) {
  if (sub)
    return (
      <>
        <p>
          <a
            href="/console/workspaces"
            onClick={(e) => {
              e.preventDefault();
              navigate('workspaces');
            }}
          >
            ← All workspaces
          </a>
        </p>
        {can(self, 'workspace_users.read') ? (
          <Table
            title="Members"
            path={`/workspaces/${encodeURIComponent(sub)}/users?page_size=100`}
            columns={[['Email', text('email')], ['Name', text('name')], ['Workspace role', text('role')], ['Organisation role', text('organisation_role')], ['Since', at('created_at')]]}
          />
        ) : (
          <p>This key may not list the members of a workspace (workspace_users.read).</p>
        )}
      </>
    );
  return (
    <Table
      title="Workspaces"
      path="/workspaces?page_size=100"
      link={(row) => `workspaces/${String(row.id)}`}
      columns={[['Name', text('name')], ['Slug', text('slug')], ['Status', text('status')], ['Id', id('id')], ['Created', at('created_at')]]}
    />
  );
}

export const Integrations = (_: { self: Self; sub: string }) => (
  <Table
    title="Integrations"
    path="/integrations?page_size=100"
    columns={[['Name', text('name')], ['Slug', text('slug')], ['Provider', text('ai_provider_id')], ['Key (masked)', text('key')], ['Status', text('status')], ['Updated', at('updated_at')]]}
  />
);

export const Providers = (_: { self: Self; sub: string }) => (
  <Table
    title="Providers"
    path="/providers?page_size=100"
    columns={[['Slug', (row) => `@${String(row.slug)}`], ['Name', text('name')], ['Integration', text('integration_slug')], ['Provider', text('ai_provider_id')], ['Status', text('status')]]}
  />
);

export const VirtualKeys = (_: { self: Self; sub: string }) => (
  <Table
    title="Virtual keys"
    path="/virtual-keys?page_size=100"
    columns={[['Name', text('name')], ['Slug', text('slug')], ['Provider', text('provider')], ['Key (masked)', text('key')], ['Status', text('status')]]}
  />
);

export const Guardrails = (_: { self: Self; sub: string }) => (
  <Table
    title="Guardrails"
    path="/guardrails?page_size=100"
    columns={[['Name', text('name')], ['Slug', text('slug')], ['Workspace', id('workspace_id')], ['Version', text('version')], ['Updated', at('updated_at')]]}
  />
);

export const Prompts = (_: { self: Self; sub: string }) => (
  <Table
    title="Prompts"
    path="/prompts?page_size=100"
    columns={[['Name', text('name')], ['Slug', text('slug')], ['Workspace', id('workspace_id')], ['Version', text('version')], ['Updated', at('updated_at')]]}
  />
);
