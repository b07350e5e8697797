import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, can, type Page, type Self } from '../api.ts';
import { dash, time } from '../format.ts';

interface Key {
  id: string;
  name: string;
  type: string;
  workspace_id: string | null;
  user_id: string | null;
  scopes: string[];
  status: 'active' | 'revoked';
  prefix_hint: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_rotated_at: string | null;
  key_transition_expires_at: string | null;
  key?: string;
}

const ROTATE = ['api_keys.rotate', 'organisation_service_api_keys.rotate', 'workspace_service_api_keys.rotate', 'workspace_user_api_keys.rotate'];

export function ApiKeys({ self }: { self: Self; sub: string }) {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; key: string; until: string | null } | null>(null);
  const [tick, setTick] = useState(0);
  const mayWrite = can(self, 'api_keys.write');
  const mayRotate = ROTATE.some((s) => can(self, s));

  useEffect(() => {
    api<Page<Key>>('GET', '/api-keys?page_size=100')
      .then((p) => setKeys(p.data))
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [tick]);

  const act = async (fn: () => Promise<void>) => {
    setError(null);
    try {
      await fn();
      setTick((t) => t + 1);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  };

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {mayWrite && (
        <CreateKey
          self={self}
          onCreate={(body) =>
            act(async () => {
              const made = await api<Key>('POST', '/api-keys', body);
              setSecret({ name: made.name, key: made.key ?? '', until: null });
            })
          }
        />
      )}
      {secret && (
        <div class="secret" role="status">
          <p>
            Secret of <strong>{secret.name}</strong>, shown this once{secret.until ? `; the previous secret keeps working until ${time(secret.until)}` : ''}:
          </p>
          <code data-testid="secret">{secret.key}</code>
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {keys && (
        <div class="scroll">
          <table>
            <caption class="sr-only">API keys the signed-in key may see</caption>
            <thead>
              <tr>
                {['Name', 'Type', 'Key', 'Scopes', 'Status', 'Last used', 'Rotated', 'Old secret valid until', 'Actions'].map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>{k.name}</td>
                  <td>{k.type}</td>
                  <td>
                    <code>{k.prefix_hint}…</code>
                  </td>
                  <td class="scopes">{k.scopes.join(', ')}</td>
                  <td class={k.status === 'active' ? 'ok' : 'bad'}>{k.status}</td>
                  <td>{time(k.last_used_at)}</td>
                  <td>{time(k.last_rotated_at)}</td>
                  <td>{k.key_transition_expires_at ? time(k.key_transition_expires_at) : dash}</td>
                  <td class="actions">
                    {mayRotate && k.status === 'active' && (
                      <button
                        type="button"
                        aria-label={`Rotate ${k.name}`}
                        onClick={() =>
                          act(async () => {
                            const rotated = await api<Key>('POST', `/api-keys/${k.id}/rotate`, {});
                            setSecret({ name: rotated.name, key: rotated.key ?? '', until: rotated.key_transition_expires_at });
                          })
                        }
                      >
                        Rotate
                      </button>
                    )}
                    {mayWrite && k.id !== self.id && (
                      <button
                        type="button"
                        aria-label={`${k.status === 'active' ? 'Revoke' : 'Reactivate'} ${k.name}`}
                        onClick={() => act(() => api('PUT', `/api-keys/${k.id}`, { status: k.status === 'active' ? 'revoked' : 'active' }))}
                      >
                        {k.status === 'active' ? 'Revoke' : 'Reactivate'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreateKey({ self, onCreate }: { self: Self; onCreate: (body: Record<string, unknown>) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState(self.type === 'organisation-service' || self.organisation_role === 'owner' || self.organisation_role === 'admin' ? 'organisation-service' : 'workspace-service');
  const [workspace, setWorkspace] = useState(self.workspace_id);
  const [user, setUser] = useState('');
  const [scopes, setScopes] = useState('completions.write');
  return (
    <form
      class="create"
      aria-label="Create an API key"
      onSubmit={(e) => {
        e.preventDefault();
        const body: Record<string, unknown> = { name, type, scopes: scopes.split(/[\s,]+/).filter(Boolean) };
        if (type !== 'organisation-service') body.workspace_id = workspace;
        if (type === 'workspace-user') body.user_id = user;
        onCreate(body);
      }}
    >
      <h2>Create a key</h2>
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Type
        <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="organisation-service">organisation-service</option>
          <option value="workspace-service">workspace-service</option>
          <option value="workspace-user">workspace-user</option>
        </select>
      </label>
      {type !== 'organisation-service' && (
        <label>
          Workspace (id or slug)
          <input required value={workspace} onInput={(e) => setWorkspace(e.currentTarget.value)} />
        </label>
      )}
      {type === 'workspace-user' && (
        <label>
          User id
          <input required value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </label>
      )}
      <label>
        Scopes (comma separated)
        <input required value={scopes} onInput={(e) => setScopes(e.currentTarget.value)} />
      </label>
      <button type="submit">Create</button>
    </form>
  );
}
