// The console's logs page in headless Chromium, against an in-process gateway on a real port and the tests' local
// OpenAI server: calls made through two stored providers, two models, two workspaces, a saved config with a
// guardrail, and a failing one; then each filter of the page (provider, model, workspace, key, status, config, trace
// id, metadata by a click on a pair) shows exactly the right rows; the filters live in the address (a link opens the
// filtered view, Back returns to the previous one); live updates add the new matching rows without losing the filter;
// the detail shows the hook results, the metadata and the path of the attempts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import type { Server } from 'bun';
import type { Browser, Page } from 'playwright-core';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { adminCall, launchBrowser, listen, rowTexts, shot, signIn, skipReason, WAIT, waitForLogs } from './support.ts';

const PROVIDER_KEY = 'sk-console-logs-0123456789';

describe.skipIf(skipReason !== null)(`console logs page in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let server: Server<undefined>;
  let origin: string;
  let gateway: Gateway;
  let openai: OpenAIMock;
  let browser: Browser;
  let otherKey: string;
  let otherKeyId: string;
  let configId: string;
  /** Trace ids by name of the call. */
  const traces: Record<string, string> = {};

  const call = async (name: string, opts: { key?: string; model: string; team: string; config?: string; status?: number }) => {
    const r = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': opts.key ?? TEST_ADMIN_KEY,
        'content-type': 'application/json',
        'x-gateway-metadata': JSON.stringify({ team: opts.team, call: name }),
        ...(opts.config ? { 'x-gateway-config': opts.config } : {}),
      },
      body: JSON.stringify({ model: opts.model, messages: [{ role: 'user', content: `hello from ${name}` }] }),
    });
    const text = await r.text();
    if (r.status !== (opts.status ?? 200)) throw new Error(`${name}: ${r.status} ${text}`);
    traces[name] = r.headers.get('x-gateway-trace-id') as string;
  };

  /** Waits until the filter field `name` holds `value` (the form follows the address after Back). */
  const fieldWhen = (page: Page, name: string, value: string) =>
    page.waitForFunction(([n, v]) => (globalThis as any).document.querySelector(`form.filters input[name="${n}"]`)?.value === v, [name, value] as const, { ...WAIT, polling: 100 });

  const callsIn = (rows: string[]) => rows.map((r) => /call=(\w+)/.exec(r)?.[1]).sort();

  /** Empties the form's text fields, fills `values` (by label) and applies them: one new entry in the history. */
  async function filter(page: Page, values: Record<string, string>): Promise<void> {
    for (const input of await page.locator('form.filters input:not([type="checkbox"])').all()) await input.fill('');
    for (const [label, value] of Object.entries(values)) await page.getByLabel(label, { exact: true }).fill(value);
    await applied(page, () => page.getByRole('button', { name: 'Filter' }).click());
  }

  /** Does `action` and waits for the list it asks for: the table shown afterwards is the new view's. */
  async function applied(page: Page, action: () => Promise<unknown>): Promise<void> {
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/logs', WAIT);
    await action();
    await answered;
  }

  /** Waits until the table lists exactly the calls `names` (any order), else fails showing what it lists. */
  async function expectCalls(page: Page, names: string[]): Promise<string[]> {
    const want = [...names].sort();
    const listed = (w: string[]) => {
      const rows = [...(globalThis as any).document.querySelectorAll('table.logs > tbody > tr')] as { textContent: string }[];
      const got = rows.map((r) => /call=(\w+)/.exec(r.textContent)?.[1] ?? '?').sort();
      return JSON.stringify(got) === JSON.stringify(w);
    };
    await page.waitForFunction(listed, want, { ...WAIT, polling: 100 }).catch(() => undefined);
    const rows = await rowTexts(page);
    expect(callsIn(rows)).toEqual(want);
    return rows;
  }

  beforeAll(async () => {
    const port = listen();
    server = port.server;
    origin = port.origin;
    gateway = await startInProcessGateway();
    port.attach(gateway);
    openai = await startOpenAIMock({ apiKey: PROVIDER_KEY });
    const self = (await adminCall(origin, 'GET', '/api-keys/self')) as { workspace_id: string };
    const other = (await adminCall(origin, 'POST', '/workspaces', { name: 'Logs other', slug: 'logs-other' })) as { id: string };
    for (const slug of ['logs-a', 'logs-b'])
      await adminCall(origin, 'POST', '/integrations', {
        name: slug,
        slug,
        ai_provider_id: 'openai',
        key: PROVIDER_KEY,
        configurations: { custom_host: openai.url },
        workspaces: [
          { id: self.workspace_id, enabled: true },
          { id: other.id, enabled: true },
        ],
      });
    const config = await adminCall(origin, 'POST', '/configs', {
      name: 'Logs guarded',
      slug: 'logs-guarded',
      workspace_id: self.workspace_id,
      config: { provider: '@logs-a', input_guardrails: [{ 'default.contains': { words: ['hello'] } }] },
    });
    configId = String(config.id);
    const made = await adminCall(origin, 'POST', '/api-keys', { name: 'other workspace', type: 'workspace-service', workspace_id: other.id, scopes: ['completions.write'] });
    otherKey = String(made.key);
    otherKeyId = String(made.id);

    await call('alpha', { model: '@logs-a/gpt-4o-mini', team: 'red' });
    await call('beta', { model: '@logs-b/gpt-4o', team: 'blue' });
    await call('gamma', { key: otherKey, model: '@logs-a/gpt-4o-mini', team: 'red' });
    await call('delta', { model: 'gpt-4o', team: 'red', config: 'logs-guarded' });
    openai.enqueue({ kind: 'error', status: 503 });
    await call('omega', { model: '@logs-b/gpt-4o-mini', team: 'blue', status: 503 });
    await waitForLogs(origin, 5);
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await openai?.stop();
    await gateway?.close();
  });

  test('each filter shows the right rows; the filter is in the address; a metadata pair filters by a click', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY);
    await expectCalls(page, ['alpha', 'beta', 'delta', 'gamma', 'omega']);

    await filter(page, { Provider: 'logs-b' });
    await expectCalls(page, ['beta', 'omega']);
    // The provider type: every call here went to an OpenAI integration; none to Anthropic.
    await filter(page, { 'Provider type': 'anthropic' });
    await page.getByText('No logs match.').waitFor(WAIT);
    await filter(page, { 'Provider type': 'openai' });
    await expectCalls(page, ['alpha', 'beta', 'delta', 'gamma', 'omega']);
    // The model as the call named it; a comma list matches any of its values.
    await filter(page, { Model: 'gpt-4o,@logs-b/gpt-4o' });
    await expectCalls(page, ['beta', 'delta']);
    await filter(page, { Workspace: 'logs-other' });
    await expectCalls(page, ['gamma']);
    await filter(page, { 'API key id': otherKeyId });
    await expectCalls(page, ['gamma']);
    await filter(page, { Status: '503' });
    await expectCalls(page, ['omega']);
    await filter(page, { Config: 'logs-guarded' });
    await expectCalls(page, ['delta']);
    await filter(page, { 'Trace id': traces.beta as string });
    await expectCalls(page, ['beta']);
    // Two filters together.
    await filter(page, { Provider: 'logs-a', Model: '@logs-a/gpt-4o-mini' });
    await expectCalls(page, ['alpha', 'gamma']);
    const both = '?provider=logs-a&model=%40logs-a%2Fgpt-4o-mini';
    expect(new URL(page.url()).search).toBe(both);
    // Latency from 0 ms: every call of that provider and model still.
    await page.getByLabel('Latency from (ms)').fill('0');
    await applied(page, () => page.getByRole('button', { name: 'Filter' }).click());
    await page.waitForURL((u) => u.search.includes('latency_min=0'), WAIT);
    await expectCalls(page, ['alpha', 'gamma']);

    // Back: the previous view, its rows and its form values.
    await page.goBack();
    await page.waitForURL((u) => u.search === both, WAIT);
    await fieldWhen(page, 'latency_min', '');
    await page.goBack();
    await fieldWhen(page, 'trace_id', traces.beta as string);
    await expectCalls(page, ['beta']);

    // A metadata pair in the table filters by it.
    await applied(page, () => page.getByRole('button', { name: 'Clear' }).click());
    await expectCalls(page, ['alpha', 'beta', 'delta', 'gamma', 'omega']);
    await applied(page, () => page.locator('table.logs tbody tr', { hasText: 'call=beta' }).getByRole('button', { name: 'team=blue' }).click());
    await expectCalls(page, ['beta', 'omega']);
    expect(JSON.parse(await page.getByLabel('Metadata (JSON)').inputValue())).toEqual({ team: 'blue' });
    await shot(page, 'logs-filtered');
    await page.close();

    // The address opens the filtered view (after signing in: the key is not kept across loads).
    const linked = await signIn(browser, origin, TEST_ADMIN_KEY, 'logs?status=503&since=24h');
    await expectCalls(linked, ['omega']);
    expect(await linked.getByLabel('Status').inputValue()).toBe('503');
    expect(await linked.getByLabel('Since').inputValue()).toBe('24h');
    await linked.close();
  }, 60_000);

  test('a custom time range: the calls made inside it, none before it', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY);
    await page.getByLabel('Since').selectOption('range');
    // datetime-local takes the browser's local time: an hour back to an hour ahead holds every call.
    const local = (ms: number) => page.evaluate((t) => new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 19), ms);
    await page.getByLabel('From', { exact: true }).fill(await local(Date.now() - 3_600_000));
    await page.getByLabel('To', { exact: true }).fill(await local(Date.now() + 3_600_000));
    await applied(page, () => page.getByRole('button', { name: 'Filter' }).click());
    await expectCalls(page, ['alpha', 'beta', 'delta', 'gamma', 'omega']);
    await page.getByLabel('To', { exact: true }).fill(await local(Date.now() - 3_000_000));
    await applied(page, () => page.getByRole('button', { name: 'Filter' }).click());
    await page.getByText('No logs match.').waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get('since')).toBe('range');
    await page.close();
  }, 60_000);

  test('saved filters: the filters shown saved under a name, then picked to filter the table', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY);
    await filter(page, { Provider: 'logs-b', Status: '503' });
    await expectCalls(page, ['omega']);
    await page.getByLabel('Save these filters as').fill('Failing logs-b');
    await page.getByRole('form', { name: 'Save the filters' }).getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as “Failing logs-b”.').waitFor(WAIT);
    const stored = (await adminCall(origin, 'GET', '/logs/saved-filters')) as { data: { name: string; filters: Record<string, string> }[] };
    expect(stored.data.find((f) => f.name === 'Failing logs-b')?.filters).toEqual({ provider: 'logs-b', status: '503' });

    await applied(page, () => page.getByRole('button', { name: 'Clear' }).click());
    await expectCalls(page, ['alpha', 'beta', 'delta', 'gamma', 'omega']);
    await applied(page, () => page.getByLabel('Saved filter').selectOption({ label: 'Failing logs-b' }));
    await expectCalls(page, ['omega']);
    expect(await page.getByLabel('Provider', { exact: true }).inputValue()).toBe('logs-b');
    expect(new URL(page.url()).search).toBe('?status=503&provider=logs-b');
    await shot(page, 'logs-saved-filter');
    await page.close();
  }, 60_000);

  test('live: new calls that match appear on top, others do not, and the filter stays', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY, 'logs?provider=logs-b');
    await expectCalls(page, ['beta', 'omega']);
    await page.getByLabel('Live').check();
    await page.waitForURL((u) => u.searchParams.get('live') === '1', WAIT);
    await call('kappa', { model: '@logs-b/gpt-4o-mini', team: 'green' });
    await call('lambda', { model: '@logs-a/gpt-4o-mini', team: 'green' });
    const rows = await expectCalls(page, ['beta', 'kappa', 'omega']);
    expect(rows[0]).toContain('call=kappa');
    expect(await page.locator('table.logs tr.fresh').count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toMatch(/new log/);
    expect(await page.getByLabel('Provider', { exact: true }).inputValue()).toBe('logs-b');
    expect(new URL(page.url()).searchParams.get('provider')).toBe('logs-b');
    await shot(page, 'logs-live');
    await page.close();
  }, 60_000);

  test('the detail: hook results, metadata, attempts, bodies; "All logs" goes back to the filtered list', async () => {
    const page = await signIn(browser, origin, TEST_ADMIN_KEY, 'logs?config_id=logs-guarded');
    await expectCalls(page, ['delta']);
    await page.locator('table.logs tbody tr').first().getByRole('link').click();
    const hooks = page.locator('table.hooks tbody tr');
    await hooks.first().waitFor(WAIT);
    expect(await hooks.first().textContent()).toContain('default.contains');
    expect(await hooks.first().textContent()).toContain('passed');
    expect(await page.getByRole('list', { name: 'Retry and fallback path' }).textContent()).toContain('@logs-a');
    expect(await page.locator('.facts').first().textContent()).toContain(configId);
    expect(await page.locator('h2', { hasText: 'Metadata' }).locator('xpath=following-sibling::dl[1]').textContent()).toContain('delta');
    expect(await page.locator('h2', { hasText: 'Request body' }).locator('xpath=following-sibling::pre[1]').textContent()).toContain('hello from delta');
    await shot(page, 'log-detail-hooks');
    await page.getByRole('link', { name: '← All logs' }).click();
    await page.waitForURL((u) => u.search === '?config_id=logs-guarded', WAIT);
    await expectCalls(page, ['delta']);
    await page.close();
  }, 60_000);
});
