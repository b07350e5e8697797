// The web console in headless Chromium (Debian's `chromium`, driven by playwright-core; scripts/ensure-chromium.sh
// installs it from `npm test`), against a whole in-process gateway on a real port and a local OpenAI-shaped server:
// sign in, a playground call found in the logs, a key created and rotated, analytics, and a member who sees less.
// Signing in with SSO is tests/console/sso.test.ts (a real identity provider); the logs' filters and live updates are
// tests/console/logs.test.ts, the analytics charts tests/console/analytics.test.ts.
// One browser for the file. Each page's screenshot goes to CONSOLE_SCREENSHOTS_DIR, by default the git-ignored
// test-output/console-screenshots/ so that a test run leaves the tree clean; docs/console-screenshots/ holds the copies
// committed for the README (refreshed with CONSOLE_SCREENSHOTS_DIR=docs/console-screenshots).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import type { Server } from 'bun';
import { type Browser, chromium, type Page } from 'playwright-core';
import { addUser } from '../admin/api-keys-support.ts';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(ROOT, process.env.CONSOLE_SCREENSHOTS_DIR ?? 'test-output/console-screenshots');
const DIST = join(ROOT, 'console/dist');
const PROVIDER_KEY = 'sk-console-stored-0123456789';
const WAIT = { timeout: 20_000 };

const skipReason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing and scripts/ensure-chromium.sh could not install it (not root, or no apt-get)`;

describe.skipIf(skipReason !== null)(`web console in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let gateway: Gateway;
  let server: Server<undefined>;
  let origin: string;
  let openai: OpenAIMock;
  let browser: Browser;
  let memberKey: string;

  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${origin}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, unknown>;
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };

  async function signedIn(key: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.goto(`${origin}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor(WAIT);
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    // `npm install` builds the console (postinstall); a checkout that skipped it is built here.
    if (!existsSync(join(DIST, 'index.html'))) {
      const build = Bun.spawnSync(['npm', 'run', '--silent', 'build', '-w', '@gateway/console'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
      if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr.toString()}`);
    }
    mkdirSync(SHOTS, { recursive: true });
    gateway = await startInProcessGateway();
    server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => gateway.handle(request) });
    origin = `http://127.0.0.1:${server.port}`;
    openai = await startOpenAIMock({ apiKey: PROVIDER_KEY });
    const self = (await admin('GET', '/api-keys/self')) as { organisation_id: string; workspace_id: string };
    await admin('POST', '/integrations', {
      name: 'Console OpenAI',
      slug: 'console-openai',
      ai_provider_id: 'openai',
      key: PROVIDER_KEY,
      configurations: { custom_host: openai.url },
      workspaces: [{ id: self.workspace_id, enabled: true }],
    });
    // A fallback: the first target fails when the local server is told to (openai.enqueue), the second answers.
    await admin('POST', '/configs', {
      name: 'Console fallback', slug: 'console-fallback', workspace_id: self.workspace_id,
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: '@console-openai' }, { provider: '@console-openai' }] },
    });
    await admin('POST', '/configs', {
      name: 'Console routing', slug: 'console-routing', workspace_id: self.workspace_id, config: { provider: '@console-openai', retry: { attempts: 2 } },
    });
    const member = await addUser(gateway.service(Services.database), self.organisation_id, 'console-member@example.test', 'member', [
      { workspaceId: self.workspace_id, role: 'member' },
    ]);
    const made = await admin('POST', '/api-keys', {
      name: 'member console', type: 'workspace-user', workspace_id: self.workspace_id, user_id: member, scopes: ['logs.read', 'completions.write'],
    });
    memberKey = String(made.key);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await openai?.stop();
    await gateway?.close();
  });

  test('a wrong key is refused on the sign-in page; signing in and moving between pages by keyboard; the key is in no storage', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/console/logs`);
    await page.getByLabel('API key').fill('gw-not-a-key-at-all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('alert').textContent(WAIT)).resolves.toBeTruthy();
    await shot(page, 'sign-in-refused');
    // By keyboard: Enter in the field signs in; Tab reaches the menu, Enter follows a link.
    await page.getByLabel('API key').fill(TEST_ADMIN_KEY);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { name: 'Logs' }).waitFor(WAIT);
    for (let i = 0; i < 10 && (await page.evaluate<string>('document.activeElement?.textContent ?? ""')) !== 'Playground'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Playground' }).waitFor(WAIT);
    // Evaluated in the page (a string: this file is not compiled against the DOM).
    const stored = await page.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie');
    expect(stored).not.toContain(TEST_ADMIN_KEY);
    await page.close();
  }, 60_000);

  test('the playground streams an answer through a stored provider, shows the gateway headers and the log row, found in the logs', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Stored provider').selectOption('console-openai');
    await page.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
    await page.getByLabel('Message').fill('hello from the console');
    await page.getByRole('button', { name: 'Send' }).click();
    const logLink = page.getByRole('link', { name: /^Log / });
    await logLink.waitFor(WAIT);
    expect(await page.locator('output.answer').textContent()).toContain('hello from the console');
    const trace = await page.locator('tr', { has: page.getByRole('rowheader', { name: 'x-gateway-trace-id' }) }).locator('code').textContent();
    expect(trace).toBeTruthy();
    expect(openai.requests.at(-1)?.json).toMatchObject({ model: 'gpt-4o-mini', stream: true });
    await shot(page, 'playground');

    await logLink.click();
    await page.getByRole('heading', { name: 'Request body' }).waitFor(WAIT);
    expect(await page.locator('h2', { hasText: 'Request body' }).locator('xpath=following-sibling::pre[1]').textContent()).toContain('hello from the console');
    await shot(page, 'log-detail');

    await page.getByRole('link', { name: '← All logs' }).click();
    await page.getByLabel('Trace id').fill(trace!);
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.locator('tbody tr', { hasText: trace! });
    await row.waitFor(WAIT);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await row.textContent()).toContain('gpt-4o-mini');
    await page.getByLabel('Trace id').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await shot(page, 'logs');
    await page.close();
  }, 60_000);

  test('the playground through a fallback config: the log detail shows the failed attempt, then the one that answered', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Config').selectOption('console-fallback');
    await page.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
    await page.getByLabel('Stream').uncheck();
    openai.enqueue({ kind: 'error', status: 503 });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('link', { name: /^Log / }).click();
    const attempts = page.locator('table.attempts tbody tr');
    await attempts.first().waitFor(WAIT);
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toContain('503');
    expect(await attempts.nth(1).textContent()).toContain('200');
    expect(await attempts.nth(1).locator('code').textContent()).toContain('targets[1]');
    await shot(page, 'log-fallback');
    await page.close();
  }, 60_000);

  test('logs: filters (metadata, status, time) and older pages after the newest 50', async () => {
    const call = (team: string) =>
      fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json', 'x-gateway-metadata': JSON.stringify({ team }) },
        body: JSON.stringify({ model: '@console-openai/gpt-4o-mini', messages: [{ role: 'user', content: `paging ${team}` }] }),
      }).then((r) => r.text());
    for (let i = 0; i < 6; i++) await Promise.all(Array.from({ length: 10 }, () => call('paging')));
    await call('other');
    const page = await signedIn(TEST_ADMIN_KEY);
    // The request log is written through a queue: the table is asked again until every call is in it.
    await page.getByLabel('Metadata (JSON)').fill('{"team":"paging"}');
    // Functions run in the page (serialized: no closure), not strings: the console's content security policy forbids
    // the eval that string predicates need.
    const filtered = (): boolean => {
      const rows = [...(globalThis as any).document.querySelectorAll('tbody tr')] as { textContent: string }[];
      const buttons = [...(globalThis as any).document.querySelectorAll('button')] as { textContent: string }[];
      return rows.length === 50 && rows.every((r) => r.textContent.includes('team=paging')) && buttons.some((b) => b.textContent === 'Older logs');
    };
    for (let tries = 0; ; tries++) {
      await page.getByRole('button', { name: 'Filter' }).click();
      try {
        await page.waitForFunction(filtered, undefined, { timeout: 1000, polling: 100 });
        break;
      } catch (error) {
        if (tries > 20) throw new Error(`the 60 calls did not reach the request log: ${error}`);
      }
    }
    await page.getByRole('button', { name: 'Older logs' }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('tbody tr').length === 60, undefined, { ...WAIT, polling: 100 });
    expect(await page.getByRole('button', { name: 'Older logs' }).count()).toBe(0);

    await page.getByLabel('Status').fill('500');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No logs match.').waitFor(WAIT);
    await page.getByLabel('Status').fill('');
    await page.getByLabel('Metadata (JSON)').fill('{"team":"other"}');
    await page.getByLabel('Since').selectOption('last hour');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(
      () => {
        const rows = (globalThis as any).document.querySelectorAll('tbody tr') as { length: number; 0?: { textContent: string } };
        return rows.length === 1 && rows[0]!.textContent.includes('team=other');
      },
      undefined,
      { ...WAIT, polling: 100 },
    );
    await page.close();
  }, 60_000);

  test('API keys: create one (its secret shown once, and working), rotate it (the old secret still works in its transition)', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'API keys' }).click();
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Name').fill('browser key');
    await form.getByLabel('Scopes (comma separated)').fill('completions.write, logs.read');
    await form.getByRole('button', { name: 'Create' }).click();
    const secret = page.getByTestId('secret');
    const first = (await secret.textContent(WAIT))!;
    const selfOf = (key: string) => fetch(`${origin}/v1/api-keys/self`, { headers: { 'x-gateway-api-key': key } });
    const made = (await (await selfOf(first)).json()) as { id: string; name: string; scopes: string[] };
    expect(made).toMatchObject({ name: 'browser key', scopes: ['completions.write', 'logs.read'] });
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Rotate browser key' }).click();
    await page.getByText('the previous secret keeps working until').waitFor(WAIT);
    const second = (await secret.textContent())!;
    expect(second).not.toBe(first);
    expect(((await (await selfOf(second)).json()) as { id: string }).id).toBe(made.id);
    expect((await selfOf(first)).status).toBe(200);
    // The row shows when the old secret stops working.
    const rowOf = page.locator(`tr[data-key-id="${made.id}"]`);
    await page.waitForFunction((id) => (globalThis as any).document.querySelector(`tr[data-key-id="${id}"] td:nth-child(8)`)?.textContent !== '—', made.id, { ...WAIT, polling: 100 });
    await shot(page, 'api-keys');

    await page.getByRole('button', { name: 'Revoke browser key' }).click();
    await rowOf.getByText('revoked').waitFor(WAIT);
    expect((await selfOf(second)).status).toBe(401);
    await page.close();
  }, 60_000);

  test('analytics: the summary counts the calls made, and the groups table lists the model', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.locator('.cards').waitFor(WAIT);
    const requests = Number((await page.locator('.cards div', { hasText: 'Requests' }).locator('dd').textContent())?.replace(/\D/g, ''));
    expect(requests).toBeGreaterThanOrEqual(1);
    await page.locator('tbody tr', { hasText: 'gpt-4o-mini' }).first().waitFor(WAIT);
    // A chart per graph the API has; the calls made appear in the requests and tokens series.
    for (const title of ['Requests', 'Cost', 'Tokens', 'Latency', 'Errors', 'Cache hits']) await page.locator('figure.chart figcaption', { hasText: title }).first().waitFor(WAIT);
    expect(await page.locator('figure.chart', { hasText: 'Requests' }).locator('table tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('figure.chart', { hasText: 'Tokens' }).locator('polyline').count()).toBe(2);
    await shot(page, 'analytics');
    await page.close();
  }, 60_000);

  test('configs: a JSON editor validated live by the gateway (a violation shown, saving refused), saved as a new version, diffed', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'Configs' }).click();
    await page.getByRole('link', { name: 'Console routing' }).click();
    const editor = page.getByLabel(/^Config \(JSON\)/);
    await editor.waitFor(WAIT);
    expect(JSON.parse(await editor.inputValue())).toEqual({ provider: '@console-openai', retry: { attempts: 2 } });
    const save = page.getByRole('button', { name: 'Save as a new version' });

    await editor.fill('{"provider": "@console-openai", "retry": {"attempts": 9}, "bogus": true}');
    const violations = page.locator('#config-check li');
    await violations.first().waitFor(WAIT);
    const listed = await violations.allTextContents();
    expect(listed.some((v) => v.startsWith('retry.attempts'))).toBe(true);
    expect(listed.some((v) => v.startsWith('bogus'))).toBe(true);
    expect(await save.isDisabled()).toBe(true);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'configs');

    await editor.fill('{"provider": ');
    await page.locator('#config-check', { hasText: 'JSON:' }).waitFor(WAIT);
    expect(await save.isDisabled()).toBe(true);

    await editor.fill('{"provider": "@console-openai", "retry": {"attempts": 3}}');
    await page.locator('#config-check', { hasText: 'Valid.' }).waitFor(WAIT);
    await save.click();
    await page.getByText('Saved as version 2.').waitFor(WAIT);
    const stored = await admin('GET', '/configs/console-routing');
    expect(stored).toMatchObject({ version: 2, config: { retry: { attempts: 3 } } });

    await page.getByLabel('Compare the editor with').selectOption('1');
    const diff = page.getByLabel('Differences from version 1');
    await diff.waitFor(WAIT);
    expect(await diff.locator('.removed').allTextContents()).toContain('-     "attempts": 2');
    expect(await diff.locator('.added').allTextContents()).toContain('+     "attempts": 3');
    await shot(page, 'config-diff');
    await page.close();
  }, 60_000);

  test('workspaces and their members, integrations (key masked), providers, virtual keys, guardrails, prompts', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await page.getByRole('link', { name: 'Workspaces' }).click();
    const workspace = page.locator('tbody tr', { hasText: 'default' }).getByRole('link');
    await workspace.waitFor(WAIT);
    await shot(page, 'workspaces');
    await workspace.click();
    await page.locator('tbody tr', { hasText: 'console-member@example.test' }).waitFor(WAIT);
    expect(await page.locator('tbody tr', { hasText: 'console-member@example.test' }).textContent()).toContain('member');

    await page.getByRole('link', { name: 'Integrations' }).click();
    const integration = page.locator('tbody tr', { hasText: 'console-openai' });
    await integration.waitFor(WAIT);
    expect(await integration.textContent()).toContain('****');
    expect(await page.content()).not.toContain(PROVIDER_KEY);
    await shot(page, 'integrations');

    await page.getByRole('link', { name: 'Providers' }).click();
    await page.locator('tbody tr', { hasText: '@console-openai' }).waitFor(WAIT);
    for (const [link, heading] of [['Virtual keys', 'Virtual keys'], ['Guardrails', 'Guardrails'], ['Prompts', 'Prompts']]) {
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading }).waitFor(WAIT);
      await page.getByText('None.').waitFor(WAIT);
      expect(await page.getByRole('alert').count()).toBe(0);
    }
    await page.close();
  }, 60_000);

  test('a member (logs.read and completions.write) sees Logs and Playground only, and the console never asks for the rest', async () => {
    const asked: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    page.on('request', (request) => {
      if (request.url().includes('/v1/')) asked.push(new URL(request.url()).pathname);
    });
    await page.goto(`${origin}/console/api-keys`);
    await page.getByLabel('API key').fill(memberKey);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.waitFor(WAIT);
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Logs', 'Playground']);
    // /console/api-keys asked for, the first page it may see shown instead.
    await page.getByRole('heading', { name: 'Logs' }).waitFor(WAIT);
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('heading', { name: 'Playground' }).waitFor(WAIT);
    // Without providers.read and configs.read, no list is fetched: the model field names the provider.
    expect(await page.getByLabel('Stored provider').count()).toBe(0);
    await shot(page, 'member');
    // Besides the sign-in page's public question whether SSO is offered (/v1/sso/status), and the logs page's saved
    // filters (logs.read, as the page).
    expect(asked.filter((p) => p !== '/v1/api-keys/self' && p !== '/v1/logs' && p !== '/v1/logs/saved-filters' && p !== '/v1/sso/status')).toEqual([]);
    await page.close();
  }, 60_000);
});
