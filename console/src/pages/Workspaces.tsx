/**
 * Workspaces (docs/admin/identity.md): list, create, edit and delete; a workspace opens its members: add one with a
 * role, change a role, remove. Creating and deleting workspaces is for organisation admins; editing for the
 * workspace's admins; members are managed by its admins and managers. Without the role the control is not shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, can, type Self } from '../api.ts';
import { dash, short, time } from '../format.ts';
import { may, orgAdmin, workspaceAdmin, workspaceWriter } from '../roles.ts';
import { Alert, DataTable, DeleteButton, Field, FormDialog, Link, Opener, useList } from '../ui.tsx';

interface Workspace {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  status: string;
  created_at: string;
}

interface Member {
  id: string;
  user_id: string;
  email: string;
  name: string | null;
  role: string;
  organisation_role: string | null;
  created_at: string;
}

interface User {
  id: string;
  email: string;
  name: string | null;
}

const ROLES = ['member', 'manager', 'admin'] as const;

export function Workspaces({ self, sub }: { self: Self; sub: string }) {
  return sub ? <Members self={self} workspaceId={sub} /> : <WorkspaceList self={self} />;
}

/** May the key edit this workspace: organisation admins any, a workspace admin their own. */
const mayEdit = (self: Self, w: Workspace) => can(self, 'workspaces.write') && (orgAdmin(self) || (w.id === self.workspace_id && workspaceAdmin(self)));

function WorkspaceList({ self }: { self: Self }) {
  // Archived workspaces are listed to organisation admins only (a 403 for anyone else).
  const { rows, error, reload } = useList<Workspace>(`/workspaces?page_size=1000${orgAdmin(self) ? '&status=active,archived' : ''}`);
  const [failed, setFailed] = useState<string | null>(null);
  return (
    <section aria-labelledby="ws-title">
      <h1 id="ws-title">Workspaces</h1>
      {may(self, 'workspaces.write', orgAdmin) && (
        <Opener label="New workspace">{(close) => <WorkspaceForm self={self} onClose={close} onSaved={reload} />}</Opener>
      )}
      <Alert text={error ?? failed} />
      {rows && (
        <DataTable
          caption="Workspaces"
          rows={rows}
          columns={[
            ['Name', (w) => <Link to={`workspaces/${w.id}`}>{w.name}</Link>],
            ['Slug', (w) => w.slug],
            ['Description', (w) => w.description ?? dash],
            ['Status', (w) => w.status],
            ['Id', (w) => <span title={w.id}>{short(w.id)}</span>],
            ['Created', (w) => time(w.created_at)],
          ]}
          actions={(w) => (
            <>
              {mayEdit(self, w) && (
                <Opener label="Edit" aria={`Edit ${w.name}`}>
                  {(close) => <WorkspaceForm self={self} workspace={w} onClose={close} onSaved={reload} />}
                </Opener>
              )}
              {may(self, 'workspaces.delete', orgAdmin) && (
                <DeleteButton
                  what={`workspace ${w.name}`}
                  onDelete={async () => {
                    setFailed(null);
                    await api('DELETE', `/workspaces/${w.id}`);
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

function WorkspaceForm({ self, workspace, onClose, onSaved }: { self: Self; workspace?: Workspace; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(workspace?.name ?? '');
  const [slug, setSlug] = useState(workspace?.slug ?? '');
  const [description, setDescription] = useState(workspace?.description ?? '');
  const [status, setStatus] = useState(workspace?.status ?? 'active');
  // Archiving (members lose access until it is restored) is for organisation admins.
  const mayArchive = workspace && orgAdmin(self);
  return (
    <FormDialog
      title={workspace ? `Edit workspace ${workspace.name}` : 'New workspace'}
      submit={workspace ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async () => {
        const body: Record<string, unknown> = { name, description: description || null };
        if (slug) body.slug = slug;
        if (mayArchive && status !== workspace.status) body.status = status;
        await (workspace ? api('PUT', `/workspaces/${workspace.id}`, body) : api('POST', '/workspaces', body));
        onSaved();
      }}
    >
      <Field label="Name" required value={name} onInput={setName} />
      <Field label="Slug" value={slug} onInput={setSlug} hint={workspace ? undefined : 'Optional: made from the name when empty.'} />
      <Field label="Description" value={description} onInput={setDescription} />
      {mayArchive && (
        <>
          <label for="workspace-status">Status</label>
          <select id="workspace-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="active">active</option>
            <option value="archived">archived (its members lose access)</option>
          </select>
        </>
      )}
    </FormDialog>
  );
}

function Members({ self, workspaceId }: { self: Self; workspaceId: string }) {
  const path = `/workspaces/${encodeURIComponent(workspaceId)}`;
  const { rows, error, reload } = useList<Member>(can(self, 'workspace_users.read') ? `${path}/users?page_size=1000` : null);
  const [failed, setFailed] = useState<string | null>(null);
  const [workspace, setWorkspace] = useState<Workspace | null>(null);
  useEffect(() => {
    api<Workspace>('GET', path)
      .then(setWorkspace)
      .catch(() => setWorkspace(null));
  }, [path]);
  // Members are managed by the workspace's admins and managers (managers: never the admin role, the gateway says so).
  const manage = can(self, 'workspace_users.write') && (orgAdmin(self) || (workspaceId === self.workspace_id && workspaceWriter(self)));
  const setRole = async (m: Member, role: string) => {
    setFailed(null);
    try {
      await api('PUT', `${path}/users/${m.user_id}`, { role });
    } catch (e) {
      setFailed(e instanceof Error ? e.message : String(e));
    }
    reload();
  };
  return (
    <section aria-labelledby="members-title">
      <p>
        <Link to="workspaces">← All workspaces</Link>
      </p>
      <h1 id="members-title">{workspace ? `Members of ${workspace.name}` : 'Members'}</h1>
      {!can(self, 'workspace_users.read') && <p>This key may not list the members of a workspace (workspace_users.read).</p>}
      {manage && <Opener label="Add a member">{(close) => <AddMember self={self} path={path} onClose={close} onSaved={reload} />}</Opener>}
      <Alert text={error ?? failed} />
      {rows && (
        <DataTable
          caption="Members of the workspace"
          rows={rows}
          columns={[
            ['Email', (m) => m.email],
            ['Name', (m) => m.name ?? dash],
            [
              'Workspace role',
              (m) =>
                manage ? (
                  <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => setRole(m, e.currentTarget.value)}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  m.role
                ),
            ],
            ['Organisation role', (m) => m.organisation_role ?? dash],
            ['Since', (m) => time(m.created_at)],
          ]}
          actions={
            manage
              ? (m) => (
                  <DeleteButton
                    what={`member ${m.email}`}
                    onDelete={async () => {
                      await api('DELETE', `${path}/users/${m.user_id}`);
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

/**
 * Adds a user by e-mail or id. Organisation admins with users.read get the organisation's users to pick from, and
 * with users.write an unknown address becomes a new user of the organisation, added to this workspace (POST /users).
 */
function AddMember({ self, path, onClose, onSaved }: { self: Self; path: string; onClose: () => void; onSaved: () => void }) {
  const { rows: users } = useList<User>(may(self, 'users.read', orgAdmin) ? '/users?page_size=1000' : null);
  const [who, setWho] = useState('');
  const [role, setRole] = useState('member');
  const mayCreate = may(self, 'users.write', orgAdmin);
  return (
    <FormDialog
      title="Add a member"
      submit="Add"
      onClose={onClose}
      onSubmit={async () => {
        const wanted = who.trim().toLowerCase();
        const known = users?.find((u) => u.email === wanted || u.id === who.trim());
        if (known || !wanted.includes('@')) await api('POST', `${path}/users`, { user_id: known?.id ?? who.trim(), role });
        else if (mayCreate) await api('POST', '/users', { email: wanted, workspaces: [{ id: decodeURIComponent(path.split('/')[2]!), role }] });
        else throw new Error('No user of the organisation has this e-mail address that this key may see; enter the user id.');
        onSaved();
      }}
    >
      <Field
        label={users ? 'E-mail or user id' : 'User id'}
        required
        value={who}
        onInput={setWho}
        list={users ? 'known-users' : undefined}
        autocomplete="off"
        hint={mayCreate ? 'An address that is not a user yet adds a new user of the organisation.' : undefined}
      />
      {users && (
        <datalist id="known-users">
          {users.map((u) => (
            <option key={u.id} value={u.email}>
              {u.name ?? ''}
            </option>
          ))}
        </datalist>
      )}
      <label for="member-role">Role</label>
      <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
        {ROLES.map((r) => (
          <option key={r}>{r}</option>
        ))}
      </select>
    </FormDialog>
  );
}
