/**
 * Two gateway processes on one MariaDB database and one Redis: a change made through one is used by the other's
 * next requests within a second (the in-memory set is reloaded on the Redis announcement, not per request).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('a change through one gateway process reaches another [mysql + redis]', () => {
  let db: E2EDatabase;
  let mock: OpenAIMock;
  let one: GatewayProcess;
  let two: GatewayProcess;
  const adminKey = `gw-test-${crypto.randomUUID()}`;

  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    mock = await startOpenAIMock({ apiKey: null });
    const env = { DATABASE_URL: db.url, REDIS_URL, GATEWAY_ENCRYPTION_KEY: 'cross-process-encryption-key', GATEWAY_ADMIN_API_KEY: adminKey };
    // One after the other: the first bootstraps the organisation, the second finds it.
    one = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
    two = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
  });
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await mock?.stop();
    await db?.drop();
  });

  const admin = async (gw: GatewayProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': adminKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };
  const chat = (gw: GatewayProcess, headers: Record<string, string>) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': adminKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });

  /** Polls `check` until it holds; resolves to the time it took (ms), or fails after `limitMs`. */
  async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`);
      await Bun.sleep(20);
    }
    return Date.now() - started;
  }

  test('create, change the key, withdraw access, add a virtual key: each seen by the other process within a second', async () => {
    const slug = `xp-${crypto.randomUUID().slice(0, 8)}`;
    // Process two has read (and cached) the set before the change: the unknown slug is a 400 there.
    expect((await chat(two, { 'x-gateway-provider': `@${slug}` })).status).toBe(400);

    const created = await admin(one, 'POST', '/integrations', {
      name: 'Cross process',
      slug,
      ai_provider_id: 'openai',
      key: 'sk-cross-process-0001',
      configurations: { custom_host: mock.url },
      workspaces: [{ id: 'default' }],
    });
    expect(created.status).toBe(201);
    await within(1000, async () => (await chat(two, { 'x-gateway-provider': `@${slug}` })).status === 200);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-cross-process-0001');

    expect((await admin(one, 'PUT', `/integrations/${slug}`, { key: 'sk-cross-process-0002' })).status).toBe(200);
    await within(1000, async () => {
      await chat(two, { 'x-gateway-provider': `@${slug}` });
      return mock.requests.at(-1)?.headers.authorization === 'Bearer sk-cross-process-0002';
    });

    expect((await admin(one, 'PUT', `/integrations/${slug}/workspaces`, { workspaces: [{ id: 'default', enabled: false }] })).status).toBe(200);
    await within(1000, async () => (await chat(two, { 'x-gateway-provider': `@${slug}` })).status === 403);

    const vk = await admin(two, 'POST', '/virtual-keys', { name: 'Made in two', provider: 'openai', key: 'sk-cross-vk-00000003', configurations: { custom_host: mock.url } });
    expect(vk.status).toBe(201);
    await within(1000, async () => (await chat(one, { 'x-gateway-virtual-key': String(vk.body.slug) })).status === 200);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-cross-vk-00000003');
  });
});
