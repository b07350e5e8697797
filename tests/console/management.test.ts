// The console's management pages in headless Chromium (same harness as browser.test.ts): an organisation admin
// creates, edits and deletes workspaces, members, integrations (the secret never shown back), providers, virtual keys,
// configs, guardrails and prompts through the pages' dialogs, each change checked through the administration API; a
// workspace member with every read scope sees the lists without a single management control, and the console never
// asks for what only admins may read (the network log). Screenshots go to CONSOLE_SCREENSHOTS_DIR.
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
const SECRET = 'sk-typed-in-the-console-5678';
const REPLACED = 'sk-replaced-in-the-console-9999';
const WAIT = { timeout: 20_000 };

const skipReason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing and scripts/ensure-chromium.sh could not install it (not root, or no apt-get)`;

describe.skipIf(skipReason !== null)(`console management pages in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let gateway: Gateway;
  let server: Server<undefined>;
  let origin: string;
  let openai: OpenAIMock;
  let browser: Browser;
  let memberKey: string;
  let workspaceId: string;

  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${origin}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, json: (r.status === 204 ? {} : await r.json()) as Record<string, any> };
  };

  async function signedIn(key: string, onRequest?: (method: string, path: string) => void): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    if (onRequest) page.on('request', (r) => r.url().includes('/v1/') && onRequest(r.method(), new URL(r.url()).pathname));
    await page.goto(`${origin}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor(WAIT);
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const go = async (page: Page, title: string) => {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: title, exact: true }).click();
    await page.getByRole('heading', { name: title, exact: true }).waitFor(WAIT);
  };
  /** Opens a dialog with the button, fills it (label → value), submits and waits for it to close. */
  const dialog = async (page: Page, open: string, title: string, fields: Record<string, string>, submit: string) => {
    await page.getByRole('button', { name: open, exact: true }).click();
    const box = page.getByRole('dialog', { name: title });
    await box.waitFor(WAIT);
    for (const [label, value] of Object.entries(fields)) await box.getByLabel(label, { exact: true }).fill(value);
    await box.getByRole('button', { name: submit, exact: true }).click();
    return box;
  };
  const closed = (page: Page) => page.getByRole('dialog').waitFor({ ...WAIT, state: 'detached' });
  const confirmDelete = async (page: Page, what: string) => {
    await page.getByRole('button', { name: `Delete ${what}` }).click();
    await page.getByRole('dialog', { name: `Delete ${what}?` }).getByRole('button', { name: 'Delete', exact: true }).click();
    await closed(page);
  };

  beforeAll(async () => {
    if (!existsSync(join(DIST, 'index.html'))) {
      const build = Bun.spawnSync(['npm', 'run', '--silent', 'build', '-w', '@gateway/console'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
      if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr.toString()}`);
    }
    mkdirSync(SHOTS, { recursive: true });
    gateway = await startInProcessGateway();
    server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => gateway.handle(request) });
    origin = `http://127.0.0.1:${server.port}`;
    openai = await startOpenAIMock({ apiKey: PROVIDER_KEY });
    const self = (await admin('GET', '/api-keys/self')).json as { organisation_id: string; workspace_id: string };
    workspaceId = self.workspace_id;
    await admin('POST', '/integrations', {
      name: 'Stored OpenAI', slug: 'stored-openai', ai_provider_id: 'openai', key: PROVIDER_KEY,
      configurations: { custom_host: openai.url }, workspaces: [{ id: workspaceId }],
    });
    await addUser(gateway.service(Services.database), self.organisation_id, 'ada@example.test', 'member');
    // A member of the workspace (and of the organisation) whose key holds every scope of the management pages: what
    // they may do is decided by their role, which the console follows.
    const member = await addUser(gateway.service(Services.database), self.organisation_id, 'reader@example.test', 'member', [{ workspaceId, role: 'member' }]);
    const resources = ['workspaces', 'workspace_users', 'users', 'integrations', 'providers', 'virtual_keys', 'configs', 'guardrails', 'prompts'];
    const made = await admin('POST', '/api-keys', {
      name: 'reader', type: 'workspace-user', workspace_id: workspaceId, user_id: member,
      scopes: [...resources.flatMap((r) => [`${r}.read`, `${r}.write`]), ...['workspaces', 'integrations', 'providers', 'virtual_keys', 'configs', 'guardrails', 'prompts'].map((r) => `${r}.delete`)],
    });
    if (made.status !== 201) throw new Error(`member key: ${JSON.stringify(made.json)}`);
    memberKey = String(made.json.key);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await openai?.stop();
    await gateway?.close();
  });

  test('workspaces: create, rename, add members (an existing user and a new address), change a role, remove, archive, delete', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await go(page, 'Workspaces');
    await (await dialog(page, 'New workspace', 'New workspace', { Name: 'Research', Slug: 'research' }, 'Create')).waitFor({ ...WAIT, state: 'detached' });
    await page.locator('tbody tr', { hasText: 'research' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Edit Research' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit workspace Research' });
    await edit.getByLabel('Name', { exact: true }).fill('Research lab');
    await edit.getByLabel('Description', { exact: true }).fill('Models under test');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'Research lab' }).waitFor(WAIT);
    expect((await admin('GET', '/workspaces/research')).json).toMatchObject({ name: 'Research lab', description: 'Models under test' });
    await shot(page, 'workspaces-manage');

    await page.getByRole('link', { name: 'Research lab' }).click();
    await page.getByRole('heading', { name: 'Members' }).waitFor(WAIT);
    await (await dialog(page, 'Add a member', 'Add a member', { 'E-mail or user id': 'ada@example.test' }, 'Add')).waitFor({ ...WAIT, state: 'detached' });
    await page.locator('tbody tr', { hasText: 'ada@example.test' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Add a member' }).click();
    const add = page.getByRole('dialog', { name: 'Add a member' });
    await add.getByLabel('E-mail or user id').fill('newcomer@example.test');
    await add.getByLabel('Role', { exact: true }).selectOption('manager');
    await add.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('tbody tr', { hasText: 'newcomer@example.test' }).waitFor(WAIT);
    const members = async () => ((await admin('GET', '/workspaces/research/users')).json.data as { email: string; role: string }[]).map((m) => `${m.email}:${m.role}`).sort();
    expect(await members()).toEqual(['ada@example.test:member', 'newcomer@example.test:manager']);

    await page.getByLabel('Role of ada@example.test').selectOption('admin');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('tbody tr').length === 2, undefined, WAIT);
    for (let i = 0; i < 50 && !(await members()).includes('ada@example.test:admin'); i++) await Bun.sleep(100);
    expect(await members()).toContain('ada@example.test:admin');
    await shot(page, 'workspace-members');
    await confirmDelete(page, 'member newcomer@example.test');
    await page.locator('tbody tr', { hasText: 'newcomer@example.test' }).waitFor({ ...WAIT, state: 'detached' });
    expect(await members()).toEqual(['ada@example.test:admin']);

    await page.getByRole('link', { name: '← All workspaces' }).click();
    // Archived: still listed (to an organisation admin), its status shown; then deleted.
    await page.getByRole('button', { name: 'Edit Research lab' }).click();
    await page.getByRole('dialog').getByLabel('Status').selectOption('archived');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await closed(page);
    await page.locator('tbody tr', { hasText: 'Research lab' }).getByText('archived').waitFor(WAIT);
    expect((await admin('GET', '/workspaces/research')).json.status).toBe('archived');
    await confirmDelete(page, 'workspace Research lab');
    await page.getByRole('link', { name: 'Research lab' }).waitFor({ ...WAIT, state: 'detached' });
    expect((await admin('GET', '/workspaces/research')).status).toBe(404);
    await page.close();
  }, 60_000);

  test('integrations, providers and virtual keys: created and edited with write-only secrets, shown masked, deleted', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await go(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    const box = page.getByRole('dialog', { name: 'New integration' });
    await box.getByLabel('Name', { exact: true }).fill('Console typed');
    await box.getByLabel('Slug', { exact: true }).fill('console-typed');
    await box.getByLabel('API key', { exact: true }).fill(SECRET);
    expect(await box.getByLabel('API key', { exact: true }).getAttribute('type')).toBe('password');
    await box.getByLabel('Configurations (JSON)').fill(JSON.stringify({ custom_host: openai.url }));
    await box.getByRole('button', { name: 'Create', exact: true }).click();
    await closed(page);
    const row = page.locator('tbody tr', { hasText: 'console-typed' });
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain('****5678');
    // The secret is nowhere in the page, and the edit form does not hold it: its key field is empty, write-only.
    await page.getByRole('button', { name: 'Edit Console typed' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit integration Console typed' });
    expect(await edit.getByLabel('New API key').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SECRET);
    await shot(page, 'integration-edit');
    await edit.getByLabel('New API key').fill(REPLACED);
    await edit.getByRole('button', { name: 'Save' }).click();
    await closed(page);
    await page.locator('tbody tr', { hasText: '****9999' }).waitFor(WAIT);
    // The replaced key is the one the gateway now sends (the provider made for the workspace calls the local server).
    expect((await admin('GET', '/integrations/console-typed')).json.key).toBe('****9999');

    // Access: the default workspace was given it at creation; taken away here, then given back.
    await page.getByRole('button', { name: 'Workspaces of Console typed' }).click();
    const access = page.getByRole('dialog', { name: 'Workspaces of Console typed' });
    const defaultBox = access.getByRole('checkbox', { name: 'Default workspace' });
    await defaultBox.waitFor(WAIT);
    expect(await defaultBox.isChecked()).toBe(true);
    await defaultBox.uncheck();
    await access.getByRole('button', { name: 'Save' }).click();
    await closed(page);
    const enabled = async () => ((await admin('GET', '/integrations/console-typed/workspaces')).json.data as { slug: string; enabled: boolean }[]).find((w) => w.slug === 'default')?.enabled;
    expect(await enabled()).toBe(false);
    await page.getByRole('button', { name: 'Workspaces of Console typed' }).click();
    await access.getByRole('checkbox', { name: 'Default workspace' }).check();
    await access.getByRole('button', { name: 'Save' }).click();
    await closed(page);
    expect(await enabled()).toBe(true);

    await go(page, 'Providers');
    await (await dialog(page, 'New provider', 'New provider', { Name: 'Typed provider', Slug: 'typed-provider', 'Integration (slug or id)': 'console-typed' }, 'Create')).waitFor({ ...WAIT, state: 'detached' });
    await page.locator('tbody tr', { hasText: '@typed-provider' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Edit provider typed-provider' }).click();
    await page.getByRole('dialog').getByLabel('Note', { exact: true }).fill('for the console test');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.locator('tbody tr', { hasText: 'for the console test' }).waitFor(WAIT);
    await shot(page, 'providers');
    await confirmDelete(page, 'provider @typed-provider');
    await page.locator('tbody tr', { hasText: '@typed-provider' }).waitFor({ ...WAIT, state: 'detached' });

    await go(page, 'Virtual keys');
    await page.getByRole('button', { name: 'New virtual key' }).click();
    const vk = page.getByRole('dialog', { name: 'New virtual key' });
    await vk.getByLabel('Name', { exact: true }).fill('Legacy key');
    await vk.getByLabel('Slug', { exact: true }).fill('legacy-key');
    await vk.getByLabel('API key', { exact: true }).fill(SECRET);
    await vk.getByRole('button', { name: 'Create' }).click();
    await closed(page);
    await page.locator('tbody tr', { hasText: 'legacy-key' }).waitFor(WAIT);
    expect(await page.locator('tbody tr', { hasText: 'legacy-key' }).textContent()).toContain('5678');
    expect(await page.content()).not.toContain(SECRET);
    await shot(page, 'virtual-keys');
    await confirmDelete(page, 'virtual key legacy-key');
    await page.getByText('None.').waitFor(WAIT);

    await go(page, 'Integrations');
    await confirmDelete(page, 'integration Console typed');
    await page.locator('tbody tr', { hasText: 'console-typed' }).waitFor({ ...WAIT, state: 'detached' });
    expect((await admin('GET', '/integrations/console-typed')).status).toBe(404);
    await page.close();
  }, 60_000);

  test('configs: a new config refused with the gateway violations, then created, then deleted', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await go(page, 'Configs');
    // By keyboard: the dialog takes the focus (its first field), Escape closes it and gives the focus back.
    await page.getByRole('button', { name: 'New config' }).focus();
    await page.keyboard.press('Enter');
    const box = page.getByRole('dialog', { name: 'New config' });
    await box.waitFor(WAIT);
    expect(await page.evaluate<string>('document.activeElement?.closest("label")?.textContent ?? ""')).toBe('Name');
    await page.keyboard.press('Escape');
    await closed(page);
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('New config');
    await page.keyboard.press('Enter');
    await box.getByLabel('Name', { exact: true }).fill('Made in the console');
    await box.getByLabel('Slug', { exact: true }).fill('made-in-console');
    await box.getByLabel('Config (JSON)').fill('{"provider": "@stored-openai", "retry": {"attempts": 9}}');
    await box.getByRole('button', { name: 'Create' }).click();
    expect(await box.getByRole('alert').textContent(WAIT)).toContain('retry.attempts');
    await box.getByLabel('Config (JSON)').fill('{"provider": "@stored-openai", "retry": {"attempts": 2}}');
    await box.getByRole('button', { name: 'Create' }).click();
    await closed(page);
    await page.getByRole('link', { name: 'Made in the console' }).waitFor(WAIT);
    expect((await admin('GET', '/configs/made-in-console')).json).toMatchObject({ version: 1, config: { provider: '@stored-openai', retry: { attempts: 2 } } });
    await shot(page, 'configs-list');
    await confirmDelete(page, 'config Made in the console');
    await page.getByRole('link', { name: 'Made in the console' }).waitFor({ ...WAIT, state: 'detached' });
    expect((await admin('GET', '/configs/made-in-console')).status).toBe(404);
    await page.close();
  }, 60_000);

  test('guardrails: created with a JSON entry, edited (version 2, the gateway runs the new checks), deleted', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await go(page, 'Guardrails');
    await page.getByRole('button', { name: 'New guardrail' }).click();
    const box = page.getByRole('dialog', { name: 'New guardrail' });
    await box.getByLabel('Name', { exact: true }).fill('No codenames');
    await box.getByLabel('Slug', { exact: true }).fill('no-codenames');
    await box.getByLabel('Entry (JSON)').fill('{"deny": true, "default.contains": {"words": ["Bluebird"], "operator": "none"}}');
    await box.getByRole('button', { name: 'Create' }).click();
    await closed(page);
    const row = page.locator('tbody tr', { hasText: 'no-codenames' });
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain('default.contains');

    await page.getByRole('button', { name: 'Edit guardrail No codenames' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit guardrail No codenames' });
    await edit.getByLabel('Entry (JSON)').fill('{"deny": true, "default.contains": {"words": ["Bluebird", "Kestrel"], "operator": "none"}}');
    await edit.getByRole('button', { name: 'Save' }).click();
    await closed(page);
    const stored = await admin('GET', '/guardrails/no-codenames');
    expect(stored.json).toMatchObject({ version: 2, entry: { 'default.contains': { words: ['Bluebird', 'Kestrel'] } } });
    const denied = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify({ provider: '@stored-openai', input_guardrails: [stored.json.id] }) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'about Kestrel' }] }),
    });
    expect(denied.status).toBe(400);
    expect(((await denied.json()) as { error: { type: string } }).error.type).toBe('guardrail_denied');
    await shot(page, 'guardrails');
    await confirmDelete(page, 'guardrail No codenames');
    await page.getByText('None.').waitFor(WAIT);
    await page.close();
  }, 60_000);

  test('prompts: created, previewed with variables, given a new version that is published, deleted', async () => {
    const page = await signedIn(TEST_ADMIN_KEY);
    await go(page, 'Prompts');
    await page.getByRole('button', { name: 'New prompt' }).click();
    const box = page.getByRole('dialog', { name: 'New prompt' });
    await box.getByLabel('Name', { exact: true }).fill('Support bot');
    await box.getByLabel('Slug', { exact: true }).fill('support-bot');
    await box.getByLabel('Provider (@slug)').fill('@stored-openai');
    await box.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
    await box.getByRole('button', { name: 'Create' }).click();
    await closed(page);
    await page.getByRole('link', { name: 'Support bot' }).click();
    await page.getByRole('heading', { name: 'Prompt Support bot' }).waitFor(WAIT);

    const preview = page.getByRole('form', { name: 'Preview' });
    await preview.getByLabel('Variables (JSON)').fill('{"company": "Initech", "question": "Where is my stapler?"}');
    await preview.getByRole('button', { name: 'Render' }).click();
    const rendered = page.getByLabel('Rendered body');
    expect(await rendered.textContent(WAIT)).toContain('You help Initech customers.');
    expect(await rendered.textContent()).toContain('Where is my stapler?');

    await page.getByRole('button', { name: 'New version' }).click();
    const version = page.getByRole('dialog', { name: 'New version of Support bot' });
    await version.getByLabel('Messages (JSON, Mustache templates)').fill('[{"role": "system", "content": "You help {{company}} customers politely."}, {"role": "user", "content": "{{question}}"}]');
    await version.getByLabel('Version description').fill('politer');
    await version.getByRole('button', { name: 'Save version' }).click();
    await closed(page);
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByRole('button', { name: 'Publish version 1' }).waitFor(WAIT);
    expect((await admin('GET', '/prompts/support-bot')).json).toMatchObject({ published_version: 2, version: 2 });
    await preview.getByRole('button', { name: 'Render' }).click();
    await page.getByText('You help Initech customers politely.').waitFor(WAIT);
    await shot(page, 'prompt');

    await page.getByRole('link', { name: '← All prompts' }).click();
    await page.getByRole('link', { name: 'Support bot' }).waitFor(WAIT);
    await shot(page, 'prompts');
    await confirmDelete(page, 'prompt Support bot');
    await page.getByText('None.').waitFor(WAIT);
    expect((await admin('GET', '/prompts/support-bot')).status).toBe(404);
    await page.close();
  }, 60_000);

  test('a workspace member whose key holds every management scope sees the lists without management controls (the role decides), and asks only for what a member may read', async () => {
    await admin('POST', '/configs', { name: 'Seen by members', slug: 'seen-by-members', config: { provider: '@stored-openai' } });
    await admin('POST', '/guardrails', { name: 'Members see me', entry: { 'default.contains': { words: ['x'], operator: 'none' } } });
    await admin('POST', '/prompts', { name: 'Member prompt', provider: '@stored-openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const asked: string[] = [];
    const page = await signedIn(memberKey, (method, path) => asked.push(`${method} ${path}`));
    const nav = page.getByRole('navigation', { name: 'Pages' });
    // Integrations are the organisation admins' (GET /integrations is a 403 for a member): no menu entry.
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Configs', 'Workspaces', 'Providers', 'Virtual keys', 'Guardrails', 'Prompts']);

    const noControls = async () => {
      for (const name of [/^New /, /^Edit/, /^Delete/, /^Add a member/, /^Publish/, /^Save/]) expect(await page.getByRole('button', { name }).count()).toBe(0);
    };
    await go(page, 'Workspaces');
    await page.getByRole('link', { name: /default/i }).first().click();
    await page.locator('tbody tr', { hasText: 'reader@example.test' }).waitFor(WAIT);
    expect(await page.getByRole('combobox').count()).toBe(0);
    await noControls();
    await shot(page, 'member-workspace');
    await go(page, 'Configs');
    await page.getByRole('link', { name: 'Seen by members' }).waitFor(WAIT);
    await noControls();
    await go(page, 'Providers');
    await page.locator('tbody tr', { hasText: '@stored-openai' }).waitFor(WAIT);
    await noControls();
    await go(page, 'Virtual keys');
    await page.getByText('None.').waitFor(WAIT);
    await noControls();
    await go(page, 'Guardrails');
    await page.locator('tbody tr', { hasText: 'Members see me' }).waitFor(WAIT);
    await noControls();
    await go(page, 'Prompts');
    await page.getByRole('link', { name: 'Member prompt' }).click();
    await page.getByRole('heading', { name: 'Prompt Member prompt' }).waitFor(WAIT);
    await noControls();
    await shot(page, 'member-prompt');
    // Only reads (and the preview, a render), and none of the organisation admins' lists.
    expect(asked.filter((a) => !a.startsWith('GET ') && !a.endsWith('/render'))).toEqual([]);
    expect(asked.filter((a) => a.startsWith('GET /v1/integrations') || a.startsWith('GET /v1/users'))).toEqual([]);
    expect(asked).toContain(`GET /v1/workspaces/${workspaceId}/users`);
    await page.close();
  }, 60_000);
});
