import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';

export function SignIn({ onSignIn }: { onSignIn: (key: string) => Promise<string | null> }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [email, setEmail] = useState('');
  // The SSO form only where the gateway signs in with SSO (GET /v1/sso/status, public; docs/admin/sso.md).
  const [sso, setSso] = useState(false);
  const [ssoError, setSsoError] = useState<string | null>(null);
  useEffect(() => {
    api<{ enabled: boolean }>('GET', '/sso/status')
      .then((s) => setSso(s.enabled === true))
      .catch(() => setSso(false));
  }, []);
  return (
    <main class="signin">
      <h1>Gateway console</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(await onSignIn(key.trim()));
          setBusy(false);
        }}
      >
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <p class="hint">Kept in this tab's memory only: reloading the page signs you out.</p>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || !key.trim()}>
          Sign in
        </button>
      </form>
      {sso && (
        <form
          class="sso"
          aria-label="Sign in with SSO"
          onSubmit={async (e) => {
            e.preventDefault();
            // The gateway's SSO flow (docs/admin/sso.md); with SSO_AFTER_LOGIN_URL=/console/ it comes back here signed in.
            const url = `/v1/sso/login?email=${encodeURIComponent(email.trim())}`;
            // Asked first without following the redirect: a refusal (no organisation for that domain, no provider)
            // is shown here rather than as a bare JSON page. The login it starts is never used and expires.
            const first = await fetch(url, { redirect: 'manual' }).catch(() => null);
            if (first && first.type !== 'opaqueredirect' && !first.ok) {
              const body = (await first.json().catch(() => null)) as { error?: { message?: string } } | null;
              setSsoError(body?.error?.message ?? `HTTP ${first.status}`);
              return;
            }
            location.assign(url);
          }}
        >
          <h2>Single sign-on</h2>
          <label for="sso-email">Work e-mail</label>
          <input id="sso-email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          {ssoError && (
            <p role="alert" class="error">
              {ssoError}
            </p>
          )}
          <button type="submit" disabled={!email.trim()}>
            Sign in with SSO
          </button>
          <p class="hint">Your organisation's identity provider signs you in; the session lasts until you sign out.</p>
        </form>
      )}
    </main>
  );
}
