// The console signed in with SSO in headless Chromium: a real OpenID provider (the oidc-provider package, as in
// tests/sso) on loopback, its login and consent pages filled in the browser; the gateway's callback sets the HTTP-only
// session cookie and comes back to /console/ (SSO_AFTER_LOGIN_URL), where the console works with that session: the
// logs page shows the user's own calls only (a member). Signing out ends the session at the gateway. A deployment
// without SSO shows no SSO form.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server as HttpServer } from 'node:http';
import { Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import type { Server } from 'bun';
import Provider from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';
import { addUser } from '../admin/api-keys-support.ts';
import { providerHeaders, startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { adminCall, launchBrowser, listen, shot, skipReason, WAIT, waitForLogs } from './support.ts';

const USER = 'ada@acme.test';

describe.skipIf(skipReason !== null)(`console sign-in with SSO in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let idp: HttpServer;
  let issuer: string;
  let server: Server<undefined>;
  let origin: string;
  let gateway: Gateway;
  let openai: OpenAIMock;
  let browser: Browser;
  let ownTrace: string;
  let otherTrace: string;

  /** A gateway call with `key`; answers its trace id. */
  const call = async (key: string, content: string) => {
    const r = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...providerHeaders(openai.url), 'x-gateway-api-key': key },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
    });
    await r.text();
    expect(r.status).toBe(200);
    return r.headers.get('x-gateway-trace-id') as string;
  };

  beforeAll(async () => {
    const port = listen();
    server = port.server;
    origin = port.origin;
    const callback = `${origin}/v1/sso/callback`;
    idp = createServer();
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', () => resolve()));
    issuer = `http://127.0.0.1:${(idp.address() as { port: number }).port}`;
    const provider = new Provider(issuer, {
      clients: [{ client_id: 'console', client_secret: 'console-client-secret', redirect_uris: [callback], grant_types: ['authorization_code'], response_types: ['code'] }],
      findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: true, name: id.split('@')[0] }) }),
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      cookies: { keys: ['console-sso-test-cookie-key'] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    });
    idp.on('request', provider.callback());
    gateway = await startInProcessGateway({
      SSO_CALLBACK_URL: callback,
      SSO_AFTER_LOGIN_URL: '/console/',
      SSO_ALLOW_HTTP_ISSUER: 'ON',
      SSO_COOKIE_SECURE: 'OFF',
    });
    port.attach(gateway);
    openai = await startOpenAIMock({ apiKey: 'sk-test' });
    await adminCall(origin, 'POST', '/email-domains', { domain: 'acme.test' });
    await adminCall(origin, 'PUT', '/sso/oidc', { issuer, client_id: 'console', client_secret: 'console-client-secret' });
    // Ada is a member of the workspace with a key of her own; members see only their own keys' logs once
    // membersViewAllData is off (docs/admin/settings.md).
    await adminCall(origin, 'PUT', '/settings/security', { membersViewAllData: false });
    const self = (await adminCall(origin, 'GET', '/api-keys/self')) as { organisation_id: string; workspace_id: string };
    const ada = await addUser(gateway.service(Services.database), self.organisation_id, USER, 'member', [{ workspaceId: self.workspace_id, role: 'member' }]);
    const key = await adminCall(origin, 'POST', '/api-keys', { name: 'ada', type: 'workspace-user', workspace_id: self.workspace_id, user_id: ada, scopes: ['completions.write'] });
    ownTrace = await call(String(key.key), 'ada asks');
    otherTrace = await call(TEST_ADMIN_KEY, 'admin asks');
    await waitForLogs(origin, 2);
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await openai?.stop();
    await gateway?.close();
    idp?.close();
  });

  /** Fills the provider's login form (the e-mail, any password), then its consent form, until back at the gateway. */
  async function throughProvider(page: Page): Promise<void> {
    for (let step = 0; step < 5 && page.url().startsWith(issuer); step++) {
      const login = page.locator('input[name="login"]');
      if (await login.count()) {
        await login.fill(USER);
        await page.locator('input[name="password"]').fill('any');
      }
      // Each form posts and the provider answers with redirects: the next page may be at the same address (a new prompt).
      await Promise.all([page.waitForNavigation(WAIT), page.locator('button[type="submit"]').first().click()]);
    }
  }

  test('sign in with SSO at the identity provider, see the own logs, sign out: the session ends at the gateway', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${origin}/console/`);
    const form = page.getByRole('form', { name: 'Sign in with SSO' });
    await form.waitFor(WAIT);
    await shot(page, 'sign-in');
    // An address no organisation signs in with SSO: the gateway's refusal, on the sign-in page.
    await form.getByLabel('Work e-mail').fill('eve@other.test');
    await form.getByRole('button', { name: 'Sign in with SSO' }).click();
    expect(await form.getByRole('alert').textContent(WAIT)).toBe('No organisation signs in users of other.test with SSO');
    expect(new URL(page.url()).pathname).toBe('/console/');
    await form.getByLabel('Work e-mail').fill(USER);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(issuer), WAIT), form.getByRole('button', { name: 'Sign in with SSO' }).click()]);
    await throughProvider(page);

    // Back in the console, signed in by the session cookie alone: the page holds no key and cannot read the cookie.
    await page.getByRole('navigation', { name: 'Pages' }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toStartWith('/console/');
    expect(await page.locator('.who').textContent()).toContain('SSO session');
    // The data plane never takes a session: no playground in the menu.
    expect(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Playground' }).count()).toBe(0);
    const cookie = (await context.cookies(`${origin}/v1/`)).find((c) => c.name === 'gw_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).document.cookie as string)).not.toContain('gw_session');

    // The logs page, with the session's RBAC: Ada's call, not the administrator's.
    await page.getByRole('heading', { name: 'Logs' }).waitFor(WAIT);
    await page.locator('tbody tr', { hasText: ownTrace }).waitFor(WAIT);
    expect(await page.locator('tbody tr', { hasText: otherTrace }).count()).toBe(0);
    await shot(page, 'sso-logs');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor(WAIT);
    const self = await fetch(`${origin}/v1/api-keys/self`, { headers: { cookie: `gw_session=${cookie?.value}` } });
    expect(self.status).toBe(401);
    // The cookie is cleared too: a reload shows the sign-in page again.
    await page.reload();
    await page.getByLabel('API key').waitFor(WAIT);
    expect((await context.cookies(`${origin}/v1/`)).some((c) => c.name === 'gw_session')).toBe(false);
    await context.close();
  }, 60_000);

  test('a deployment without SSO shows no SSO form', async () => {
    const plain = await startInProcessGateway();
    const port = listen();
    port.attach(plain);
    try {
      const page = await browser.newPage();
      const status = page.waitForResponse((r) => r.url().endsWith('/v1/sso/status'), WAIT);
      await page.goto(`${port.origin}/console/`);
      await page.getByLabel('API key').waitFor(WAIT);
      // The status answered, and a frame drawn after it: the form would be there by now.
      expect(await (await status).json()).toEqual({ object: 'sso_status', enabled: false });
      await page.evaluate(() => new Promise((done) => (globalThis as any).requestAnimationFrame(() => done(null))));
      expect(await page.getByRole('form', { name: 'Sign in with SSO' }).count()).toBe(0);
      await page.close();
    } finally {
      port.server.stop(true);
      await plain.close();
    }
  }, 60_000);
});
