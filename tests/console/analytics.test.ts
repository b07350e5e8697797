// The console's analytics page in headless Chromium, against an in-process gateway on a real port and the tests' local
// OpenAI server: calls by two users (their workspace-user keys) and by a service key; the summary and the users chart
// count the two users; the filters (kept in the address) narrow the summary; the groups table groups by a metadata key,
// with every column, sorted by a header.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import type { Server } from 'bun';
import type { Browser, Page } from 'playwright-core';
import { addUser } from '../admin/api-keys-support.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { adminCall, launchBrowser, listen, rowTexts, shot, signIn, skipReason, WAIT, waitForLogs } from './support.ts';

const PROVIDER_KEY = 'sk-console-analytics-0123456789';

describe.skipIf(skipReason !== null)(`console analytics page in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let server: Server<undefined>;
  let origin: string;
  let gateway: Gateway;
  let openai: OpenAIMock;
  let browser: Browser;
  let memberKey: string;

  const call = async (key: string, model: string, team: string, status = 200) => {
    const r = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': key, 'content-type': 'application/json', 'x-gateway-metadata': JSON.stringify({ team }) },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'how many users?' }] }),
    });
    const text = await r.text();
    if (r.status !== status) throw new Error(`${r.status} ${text}`);
  };

  /** The text of the summary card `title`, once the summary is shown. */
  async function card(page: Page, title: string): Promise<string> {
    const dd = page.locator('.cards div', { has: page.locator('dt', { hasText: new RegExp(`^${title}$`) }) }).locator('dd');
    await dd.waitFor(WAIT);
    return (await dd.textContent()) ?? '';
  }

  beforeAll(async () => {
    const port = listen();
    server = port.server;
    origin = port.origin;
    gateway = await startInProcessGateway();
    port.attach(gateway);
    openai = await startOpenAIMock({ apiKey: PROVIDER_KEY });
    const self = (await adminCall(origin, 'GET', '/api-keys/self')) as { organisation_id: string; workspace_id: string };
    await adminCall(origin, 'POST', '/integrations', {
      name: 'an-a',
      slug: 'an-a',
      ai_provider_id: 'openai',
      key: PROVIDER_KEY,
      configurations: { custom_host: openai.url },
      workspaces: [{ id: self.workspace_id, enabled: true }],
    });
    const keys: string[] = [];
    for (const email of ['ann@example.test', 'bob@example.test']) {
      const user = await addUser(gateway.service(Services.database), self.organisation_id, email, 'member', [{ workspaceId: self.workspace_id, role: 'member' }]);
      const made = await adminCall(origin, 'POST', '/api-keys', { name: email, type: 'workspace-user', workspace_id: self.workspace_id, user_id: user, scopes: ['completions.write'] });
      keys.push(String(made.key));
    }
    // A member whose key may read analytics; whether the gateway answers them is the workspace's setting.
    const cat = await addUser(gateway.service(Services.database), self.organisation_id, 'cat@example.test', 'member', [{ workspaceId: self.workspace_id, role: 'member' }]);
    memberKey = String((await adminCall(origin, 'POST', '/api-keys', { name: 'cat', type: 'workspace-user', workspace_id: self.workspace_id, user_id: cat, scopes: ['analytics.read'] })).key);
    await call(keys[0] as string, '@an-a/gpt-4o-mini', 'red');
    await call(keys[0] as string, '@an-a/gpt-4o-mini', 'red');
    await call(keys[1] as string, '@an-a/gpt-4o', 'blue');
    await call(TEST_ADMIN_KEY, '@an-a/gpt-4o-mini', 'blue');
    openai.enqueue({ kind: 'error', status: 503 });
    await call(TEST_ADMIN_KEY, '@an-a/gpt-4o-mini', 'green', 503);
    await waitForLogs(origin, 5);
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await openai?.stop();
    await gateway?.close();
  });

  test('the users chart and the summary count the distinct users; the other charts are there', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY, 'analytics');
    expect(await card(page, 'Requests')).toBe('5');
    expect(await card(page, 'Users')).toBe('2');
    expect(await card(page, 'Errors')).toBe('1');
    const users = page.locator('figure.chart', { has: page.locator('figcaption', { hasText: /^Users/ }) });
    await users.waitFor(WAIT);
    // The chart's figures (the table for screen readers): two distinct users over the buckets, drawn as bars.
    const counts = (await users.locator('table tbody td').allTextContents()).map(Number);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await users.locator('rect').count()).toBeGreaterThan(0);
    for (const title of ['Requests', 'Cost', 'Tokens', 'Latency', 'Errors', 'Cache hits'])
      await page.locator('figure.chart figcaption', { hasText: title }).first().waitFor(WAIT);
    // Latency: the average beside p50, p95 and p99.
    expect(await page.locator('figure.chart', { hasText: 'Latency' }).locator('polyline').count()).toBe(4);
    await shot(page, 'analytics-users');
    await page.close();
  }, 60_000);

  test('filters narrow every figure and stay in the address', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY, 'analytics');
    expect(await card(page, 'Requests')).toBe('5');
    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Model', { exact: true }).fill('@an-a/gpt-4o');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((u) => u.searchParams.get('model') === '@an-a/gpt-4o', WAIT);
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.cards dd')?.textContent === '1', undefined, { ...WAIT, polling: 100 });
    expect(await card(page, 'Users')).toBe('1');
    expect((await rowTexts(page)).filter((r) => r.startsWith('@an-a/')).map((r) => r.split(' | ')[0])).toEqual(['@an-a/gpt-4o']);
    await page.close();

    // The same address opens the same view.
    const linked = await signIn(browser, origin, TEST_ADMIN_KEY, 'analytics?model=%40an-a%2Fgpt-4o-mini&since=24h');
    await linked.waitForFunction(() => (globalThis as any).document.querySelector('.cards dd')?.textContent === '4', undefined, { ...WAIT, polling: 100 });
    expect(await card(linked, 'Users')).toBe('1');
    expect(await linked.getByLabel('Range').inputValue()).toBe('24h');
    await linked.close();
  }, 60_000);

  test('groups by a metadata key with every column, sorted by a header', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY, 'analytics');
    await page.getByLabel('Group by').selectOption('metadata');
    await page.getByLabel('Metadata key', { exact: true }).fill('team');
    await page.getByRole('button', { name: 'Group', exact: true }).click();
    const table = page.locator('table.groups');
    await table.locator('tbody th', { hasText: 'green' }).waitFor(WAIT);
    const keys = async () => (await table.locator('tbody th').allTextContents()).join(',');
    // Requests, most first; ties by key.
    expect(await keys()).toBe('blue,red,green');
    const headers = await table.locator('thead th').allTextContents();
    for (const h of ['Requests', 'Cost', 'Tokens', 'p99 latency', 'Success rate', 'Errors', 'Cache hit rate', 'First seen', 'Last seen'])
      expect(headers.some((t) => t.startsWith(h))).toBe(true);
    await table.getByRole('button', { name: /^Requests/ }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelector('table.groups tbody th')?.textContent === 'green', undefined, { ...WAIT, polling: 100 });
    expect(await table.locator('th[aria-sort="ascending"]').textContent()).toContain('Requests');
    expect(new URL(page.url()).searchParams.get('group_by')).toBe('metadata');
    expect(new URL(page.url()).searchParams.get('order')).toBe('asc');
    await table.getByRole('button', { name: /^Errors/ }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelector('table.groups tbody th')?.textContent === 'green', undefined, { ...WAIT, polling: 100 });
    expect(await table.locator('th[aria-sort="descending"]').textContent()).toContain('Errors');
    await shot(page, 'analytics-groups');
    await page.close();
  }, 60_000);

  test('a member the gateway refuses analytics to sees its refusal, and the console asks once, not for every chart', async () => {
    await adminCall(origin, 'PUT', '/settings/security', { membersViewAnalytics: false });
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/v1/analytics/')) asked.push(new URL(r.url()).pathname);
    });
    try {
      await page.goto(`${origin}/console/analytics`);
      await page.getByLabel('API key').fill(memberKey);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor(WAIT);
      expect(await alert.textContent()).toBe('Analytics are not open to workspace members in this workspace');
      expect(await page.locator('figure.chart').count()).toBe(0);
      expect(asked).toEqual(['/v1/analytics/summary']);
    } finally {
      await page.close();
      await adminCall(origin, 'PUT', '/settings/security', { membersViewAnalytics: null });
    }
    // With the setting back, the same member sees the charts.
    const open = await signIn(browser, origin, memberKey, 'analytics');
    await open.locator('figure.chart').first().waitFor(WAIT);
    await open.close();
  }, 60_000);
});
