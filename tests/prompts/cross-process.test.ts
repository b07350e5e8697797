/**
 * Two gateway processes on one MariaDB database and one Redis: a prompt created, versioned or published through one
 * is what the other renders and runs within a second (its in-memory set is reloaded on the Redis announcement).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('prompts across gateway processes [mysql + redis]', () => {
  let db: E2EDatabase;
  let mock: OpenAIMock;
  let one: GatewayProcess;
  let two: GatewayProcess;
  const adminKey = `gw-test-${crypto.randomUUID()}`;

  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    mock = await startOpenAIMock({ apiKey: null });
    const env = { DATABASE_URL: db.url, REDIS_URL, GATEWAY_ENCRYPTION_KEY: 'prompts-cross-process-key', GATEWAY_ADMIN_API_KEY: adminKey };
    one = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
    two = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await mock?.stop();
    await db?.drop();
  });

  const send = async (gw: GatewayProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': adminKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };

  /** Polls until `check` holds; fails after `limitMs` (a hang guard, not a timing assertion on a fast path). */
  async function within(limitMs: number, check: () => Promise<boolean>): Promise<void> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`);
      await Bun.sleep(20);
    }
  }

  test('create, a new version published, a partial changed: each seen by the other process', async () => {
    const vk = await send(one, 'POST', '/virtual-keys', { name: 'Cross prompts', provider: 'openai', key: 'sk-cross-prompt-0001', configurations: { custom_host: mock.url } });
    expect(vk.status).toBe(201);
    const slug = `xp-${crypto.randomUUID().slice(0, 8)}`;
    // Process two has read the set before the prompt exists.
    expect((await send(two, 'POST', `/prompts/${slug}/render`, { variables: {} })).status).toBe(404);
    expect((await send(one, 'POST', '/prompts/partials', { name: 'Sign', slug: 'sign', string: '-- one' })).status).toBe(201);
    const created = await send(one, 'POST', '/prompts', { name: 'Cross', slug, string: 'v1 {{x}} {{> sign}}', model: 'gpt-3.5-turbo-instruct', virtual_key: vk.body.slug });
    expect(created.status).toBe(201);
    const rendered = async () => (await send(two, 'POST', `/prompts/${slug}/render`, { variables: { x: 'X' } })).body.data as { prompt?: string } | undefined;
    await within(5_000, async () => (await rendered())?.prompt === 'v1 X -- one');

    expect((await send(one, 'PUT', `/prompts/${slug}`, { patch: true, string: 'v2 {{x}}' })).status).toBe(200);
    expect((await send(one, 'PUT', `/prompts/${slug}/makeDefault`, { version: 2 })).status).toBe(200);
    await within(5_000, async () => (await rendered())?.prompt === 'v2 X');
    const run = await send(two, 'POST', `/prompts/${slug}/completions`, { variables: { x: 'run' } });
    expect(run.status).toBe(200);
    expect(mock.requests.at(-1)?.json).toMatchObject({ prompt: 'v2 run' });

    expect((await send(one, 'PUT', `/prompts/${slug}/makeDefault`, { version: 1 })).status).toBe(200);
    expect((await send(one, 'PUT', '/prompts/partials/sign', { string: '-- two' })).status).toBe(200);
    expect((await send(one, 'PUT', '/prompts/partials/sign/makeDefault', { version: 2 })).status).toBe(200);
    await within(5_000, async () => (await rendered())?.prompt === 'v1 X -- two');
  });
});
