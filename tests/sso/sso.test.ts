// SSO end to end (admin/sso): a real OpenID provider (the oidc-provider package) on loopback, driven like a browser
// with real redirects, forms and cookies: sign-in with PKCE, state and nonce; the session cookie accepted by the
// administration API with the user's RBAC; expiry by session_settings.max_session_ttl; logout; revocation; a user of
// another domain refused; first sign-in of an unknown user created as member, or refused with SSO_CREATE_USERS=OFF.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import { ssoSessions } from '@gateway/admin-sso';
import { eq, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import Provider from 'oidc-provider';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const GATEWAY = 'http://gateway.local';
const CALLBACK = `${GATEWAY}/v1/sso/callback`;

let idp: Server;
let issuer: string;

/** A browser: follows redirects, keeps cookies per host, fills the provider's login and consent forms. */
class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  constructor(
    private readonly gateway: Gateway,
    private readonly loginAs: string,
  ) {}

  private cookies(url: URL): string {
    return [...(this.jar.get(url.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  private keep(url: URL, res: Response): void {
    const cookies = this.jar.get(url.host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair ?? '').indexOf('=');
      if (at <= 0) continue;
      const name = (pair as string).slice(0, at).trim();
      const value = (pair as string).slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(url.host, cookies);
  }

  async request(href: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const url = new URL(href);
    const headers = { ...(init.headers ?? {}), cookie: this.cookies(url) };
    const request = new Request(url.href, { method: init.method ?? 'GET', body: init.body, headers, redirect: 'manual' });
    const res = url.host === new URL(GATEWAY).host ? await this.gateway.handle(request) : await fetch(request);
    this.keep(url, res);
    return res;
  }

  /** Starts at `href` and goes on until an answer that is neither a redirect nor a provider form. */
  async browse(href: string): Promise<Response> {
    let res = await this.request(href);
    let at = href;
    for (let step = 0; step < 20; step++) {
      if (res.status >= 300 && res.status < 400) {
        at = new URL(res.headers.get('location') as string, at).href;
        res = await this.request(at);
        continue;
      }
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('text/html')) return res;
      const html = await res.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (!action) throw new Error(`a page without a form at ${at}`);
      const fields = new URLSearchParams();
      for (const [, name, rest] of html.matchAll(/<input[^>]*name="([^"]+)"([^>]*)>/g)) {
        const value = /value="([^"]*)"/.exec(rest ?? '')?.[1];
        fields.set(name as string, name === 'login' ? this.loginAs : name === 'password' ? 'any' : (value ?? ''));
      }
      at = new URL(action, at).href;
      res = await this.request(at, { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    }
    throw new Error('too many steps');
  }
}

beforeAll(async () => {
  idp = createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', () => resolve()));
  issuer = `http://127.0.0.1:${(idp.address() as { port: number }).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'gateway', client_secret: 'gateway-client-secret', redirect_uris: [CALLBACK], grant_types: ['authorization_code'], response_types: ['code'] }],
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: true, name: id.split('@')[0] }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['sso-test-cookie-key'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
  });
  idp.on('request', provider.callback());
});
afterAll(() => idp?.close());

async function ssoGateway(env: Record<string, string> = {}) {
  const gateway = await startInProcessGateway({ SSO_CALLBACK_URL: CALLBACK, SSO_ALLOW_HTTP_ISSUER: 'ON', SSO_COOKIE_SECURE: 'OFF', ...env });
  const admin = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-gateway-api-key': TEST_ADMIN_KEY }) => {
    const res = await gateway.handle(
      new Request(`${GATEWAY}/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) }),
    );
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  expect((await admin('POST', '/email-domains', { domain: 'acme.test', allow_subdomains: true })).status).toBe(201);
  expect((await admin('PUT', '/sso/oidc', { issuer, client_id: 'gateway', client_secret: 'gateway-client-secret' })).status).toBe(201);
  return { gateway, admin };
}

const withCookie = (secret: string) => ({ cookie: `gw_session=${secret}` });

for (const dialect of E2E_DIALECTS)
describe(`SSO with OpenID Connect [${dialect}]`, () => {
  let db: E2EDatabase;
  let gateway: Gateway;
  let admin: Awaited<ReturnType<typeof ssoGateway>>['admin'];
  beforeAll(async () => {
    db = await createE2EDatabase(dialect);
    ({ gateway, admin } = await ssoGateway({ DATABASE_URL: db.url }));
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  const signIn = async (email: string, loginAs = email) => {
    const browser = new Browser(gateway, loginAs);
    const res = await browser.browse(`${GATEWAY}/v1/sso/login?email=${encodeURIComponent(email)}`);
    const body = (await res.json()) as Record<string, unknown>;
    return { status: res.status, body, secret: browser.cookie('gateway.local', 'gw_session') };
  };

  test('sign-in: redirects to the provider with PKCE, state and nonce; the callback sets an HttpOnly session cookie', async () => {
    const start = await gateway.handle(new Request(`${GATEWAY}/v1/sso/login?email=bob@eng.acme.test`));
    expect(start.status).toBe(302);
    const auth = new URL(start.headers.get('location') as string);
    expect(auth.origin).toBe(issuer);
    expect(Object.fromEntries(['client_id', 'redirect_uri', 'code_challenge_method', 'response_type'].map((k) => [k, auth.searchParams.get(k)]))).toEqual({
      client_id: 'gateway',
      redirect_uri: CALLBACK,
      code_challenge_method: 'S256',
      response_type: 'code',
    });
    for (const k of ['state', 'nonce', 'code_challenge']) expect(auth.searchParams.get(k)).toBeTruthy();
    expect(auth.searchParams.get('scope')).toBe('openid email profile');

    const browser = new Browser(gateway, 'bob@eng.acme.test');
    const done = await browser.browse(start.headers.get('location') as string);
    expect(done.status).toBe(200);
    const session = (await done.json()) as { email: string; user_id: string };
    expect(session.email).toBe('bob@eng.acme.test');
    const secret = browser.cookie('gateway.local', 'gw_session') as string;
    expect(secret).toStartWith('gws_');
    // First sign-in of an unknown user: created as an organisation member.
    expect((await admin('GET', `/users/${session.user_id}`)).body).toMatchObject({ email: 'bob@eng.acme.test', role: 'member' });
  });

  test('the session is accepted by the administration API with the user RBAC, never by the data plane', async () => {
    const { secret } = await signIn('carol@acme.test');
    expect(secret).toBeString();
    expect((await admin('GET', '/workspaces', undefined, withCookie(secret as string))).status).toBe(200);
    // A member may not create workspaces: the same 403 as their own key would get.
    const refused = await admin('POST', '/workspaces', { name: 'By a member' }, withCookie(secret as string));
    expect(refused.status).toBe(403);
    // The data plane takes API keys (and JWTs), never a session cookie.
    const call = await gateway.handle(new Request(`${GATEWAY}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...withCookie(secret as string) }, body: '{}' }));
    expect(call.status).toBe(401);
    // An organisation admin signed in gets admin routes.
    const carol = (await admin('GET', '/users')).body.data as { id: string; email: string }[];
    const id = carol.find((u) => u.email === 'carol@acme.test')?.id as string;
    expect((await admin('PUT', `/users/${id}`, { role: 'admin' })).status).toBe(200);
    expect((await admin('POST', '/workspaces', { name: 'By an admin' }, withCookie(secret as string))).status).toBe(201);
  });

  test('a session older than session_settings.max_session_ttl is refused; signing in again works', async () => {
    const { secret } = await signIn('dan@acme.test');
    expect((await admin('PUT', '/settings/session', { max_session_ttl: 900 })).status).toBe(200);
    expect((await admin('GET', '/workspaces', undefined, withCookie(secret as string))).status).toBe(200);
    // 901 s pass for this session (its issue time moved back, as a clock would).
    const database = gateway.service(Services.database);
    await database.update(ssoSessions, { created_at: Date.now() - 901_000 }, (c) => eq(c.organisation_id, c.organisation_id));
    const expired = await admin('GET', '/workspaces', undefined, withCookie(secret as string));
    expect(expired.status).toBe(401);
    expect((expired.body.error as { message: string }).message).toBe("The session is older than the organisation's max_session_ttl of 900 s: sign in again");
    const again = await signIn('dan@acme.test');
    expect((await admin('GET', '/workspaces', undefined, withCookie(again.secret as string))).status).toBe(200);
    expect((await admin('PUT', '/settings/session', { max_session_ttl: null })).status).toBe(200);
  });

  test('logout ends the session and clears the cookie; an administrator revokes a session by id', async () => {
    const first = await signIn('erin@acme.test');
    const out = await gateway.handle(new Request(`${GATEWAY}/v1/sso/logout`, { method: 'POST', headers: withCookie(first.secret as string) }));
    expect(await out.json()).toEqual({ object: 'sso_logout', ended: true });
    expect(out.headers.get('set-cookie')).toMatch(/^gw_session=; Path=\/v1; HttpOnly; SameSite=Lax; Max-Age=0/);
    const after = await admin('GET', '/workspaces', undefined, withCookie(first.secret as string));
    expect(after.status).toBe(401);
    expect((after.body.error as { message: string }).message).toMatch(/ended \(logged out or revoked\)/);

    const second = await signIn('erin@acme.test');
    expect((await admin('DELETE', `/sso/sessions/${second.body.id}`)).status).toBe(204);
    expect((await admin('GET', '/workspaces', undefined, withCookie(second.secret as string))).status).toBe(401);
    expect((await admin('DELETE', `/sso/sessions/${second.body.id}`)).status).toBe(404);
  });

  test('a user of another domain is refused, at the start and when the provider vouches for another address', async () => {
    const other = await gateway.handle(new Request(`${GATEWAY}/v1/sso/login?email=eve@other.test`));
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { message: string } }).error.message).toBe('No organisation signs in users of other.test with SSO');
    const swapped = await signIn('frank@acme.test', 'eve@other.test');
    expect(swapped.status).toBe(403);
    expect(swapped.secret).toBeUndefined();
    // A replayed or forged callback: the state is single use.
    const forged = await gateway.handle(new Request(`${CALLBACK}?code=abc&state=${crypto.randomUUID()}`));
    expect(forged.status).toBe(401);
  });

  test('the provider settings: the secret is never shown', async () => {
    const read = await admin('GET', '/sso/oidc');
    expect(read.body).toMatchObject({ issuer, client_id: 'gateway', client_secret_set: true });
    expect(JSON.stringify(read.body)).not.toContain('gateway-client-secret');
    expect((await admin('PUT', '/sso/oidc', { issuer: 'ftp://x', client_id: 'a', client_secret: 'b' })).status).toBe(400);
  });
});

test('SSO_CREATE_USERS=OFF: an unknown user is refused at the first sign-in', async () => {
  const { gateway } = await ssoGateway({ SSO_CREATE_USERS: 'OFF' });
  try {
    const browser = new Browser(gateway, 'gina@acme.test');
    const res = await browser.browse(`${GATEWAY}/v1/sso/login?email=gina@acme.test`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/is not a user of the organisation \(SSO_CREATE_USERS=OFF\)/);
    expect(browser.cookie('gateway.local', 'gw_session')).toBeUndefined();
  } finally {
    await gateway.close();
  }
});

test('GET /sso/status says whether the deployment signs in with SSO (public: the console asks before anyone signs in)', async () => {
  const on = await startInProcessGateway({ SSO_CALLBACK_URL: CALLBACK });
  const off = await startInProcessGateway({});
  try {
    const status = async (gateway: Gateway) => (await gateway.handle(new Request(`${GATEWAY}/v1/sso/status`))).json();
    expect(await status(on)).toEqual({ object: 'sso_status', enabled: true });
    expect(await status(off)).toEqual({ object: 'sso_status', enabled: false });
  } finally {
    await on.close();
    await off.close();
  }
});
