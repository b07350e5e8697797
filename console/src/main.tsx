import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, call, can, type Self, setKey } from './api.ts';
import { BASE, currentPath, navigate } from './nav.ts';
import { Analytics } from './pages/Analytics.tsx';
import { ApiKeys } from './pages/ApiKeys.tsx';
import { Configs } from './pages/Configs.tsx';
import { Logs } from './pages/Logs.tsx';
import { Playground } from './pages/Playground.tsx';
import { Guardrails } from './pages/Guardrails.tsx';
import { Integrations, Providers, VirtualKeys } from './pages/Integrations.tsx';
import { Prompts } from './pages/Prompts.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Workspaces } from './pages/Workspaces.tsx';
import { orgAdmin } from './roles.ts';
import './style.css';

/** The pages, in menu order, each with the scope (and role) it needs: without it the page is neither shown nor fetched. */
const PAGES: { path: string; title: string; scope: string; role?: (self: Self) => boolean; Page: (props: { self: Self; sub: string }) => preact.JSX.Element }[] = [
  { path: 'logs', title: 'Logs', scope: 'logs.read', Page: Logs },
  // The data plane takes API keys only, never an SSO session (docs/admin/sso.md): no playground for a session.
  { path: 'playground', title: 'Playground', scope: 'completions.write', role: (self) => !self.session, Page: Playground },
  { path: 'api-keys', title: 'API keys', scope: 'api_keys.read', Page: ApiKeys },
  { path: 'analytics', title: 'Analytics', scope: 'analytics.read', Page: Analytics },
  { path: 'configs', title: 'Configs', scope: 'configs.read', Page: Configs },
  { path: 'workspaces', title: 'Workspaces', scope: 'workspaces.read', Page: Workspaces },
  { path: 'integrations', title: 'Integrations', scope: 'integrations.read', role: orgAdmin, Page: Integrations },
  { path: 'providers', title: 'Providers', scope: 'providers.read', Page: Providers },
  { path: 'virtual-keys', title: 'Virtual keys', scope: 'virtual_keys.read', Page: VirtualKeys },
  { path: 'guardrails', title: 'Guardrails', scope: 'guardrails.read', Page: Guardrails },
  { path: 'prompts', title: 'Prompts', scope: 'prompts.read', Page: Prompts },
];

function App() {
  const [self, setSelf] = useState<Self | null>(null);
  const [checked, setChecked] = useState(false);
  // Signed in with SSO already? The session is an HTTP-only cookie (docs/admin/sso.md) the page cannot read: asking
  // who we are without a key tells. A 401 just shows the sign-in page.
  useEffect(() => {
    api<Self>('GET', '/api-keys/self')
      .then((s) => setSelf({ ...s, session: true }))
      .catch(() => undefined)
      .finally(() => setChecked(true));
  }, []);
  const signIn = async (key: string): Promise<string | null> => {
    setKey(key);
    try {
      // What the key is and may do (GET /v1/api-keys/self): the menu and every fetch follow its scopes.
      setSelf(await api<Self>('GET', '/api-keys/self'));
      return null;
    } catch (error) {
      setKey(null);
      return error instanceof ApiError ? error.message : String(error);
    }
  };
  if (!checked) return null;
  if (!self) return <SignIn onSignIn={signIn} />;
  return (
    <Shell
      self={self}
      onSignOut={async () => {
        // A session ends at the gateway (the cookie is cleared by its answer); a key is only forgotten.
        if (self.session) await call('POST', '/sso/logout').catch(() => undefined);
        setKey(null);
        setSelf(null);
      }}
    />
  );
}

function Shell({ self, onSignOut }: { self: Self; onSignOut: () => void }) {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onPop = () => setPath(currentPath());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  const pages = PAGES.filter((p) => can(self, p.scope) && (p.role?.(self) ?? true));
  const [first, ...rest] = path.split('/');
  const page = pages.find((p) => p.path === first) ?? pages[0];
  useEffect(() => {
    document.title = page ? `${page.title} · Gateway console` : 'Gateway console';
  }, [page]);
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">Gateway console</span>
        <nav aria-label="Pages">
          {pages.map((p) => (
            <a
              key={p.path}
              href={BASE + p.path}
              aria-current={p === page ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate(p.path);
              }}
            >
              {p.title}
            </a>
          ))}
        </nav>
        <span class="who" title={self.scopes.join(', ')}>
          {self.session ? 'SSO session' : (self.name ?? 'signed in')} · {self.type}
          {self.workspace_role ? ` · ${self.workspace_role}` : ''}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        {page ? <page.Page self={self} sub={page.path === first ? rest.join('/') : ''} /> : <p>This key may not see any page of the console.</p>}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
