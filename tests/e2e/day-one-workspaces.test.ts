// End to end, two gateway processes on one MariaDB database and one Redis: a model alias, a workspace's default
// config and its defaults.metadata, changed through one process, route and label the other's next calls in a
// moment (each is held in memory and reloaded on the Redis announcement, not read per request). And a workspace sees
// only its own: another workspace's key, sent as `Authorization: Bearer`, reaches neither the aliases nor the default
// config of the first, and lists only its own models.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI, { BadRequestError } from 'openai';
import { createE2EDatabase, type E2EDatabase, freePort, jsonColumn } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const STORED_KEY = 'sk-day-one-workspaces-0001';

describe('day one across two gateway processes [mysql + redis]', () => {
  let db: E2EDatabase;
  let mock: OpenAIMock;
  let one: GatewayProcess;
  let two: GatewayProcess;
  const adminKey = `gw-test-${crypto.randomUUID()}`;
  const run = crypto.randomUUID().slice(0, 8);
  const slug = `xp1-${run}`;

  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    mock = await startOpenAIMock({ apiKey: null });
    const env = { DATABASE_URL: db.url, REDIS_URL, GATEWAY_ENCRYPTION_KEY: 'day-one-workspaces-key', GATEWAY_ADMIN_API_KEY: adminKey };
    // One after the other: the first bootstraps the organisation, the second finds it.
    one = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
    two = await startGatewayProcess({ ...env, PORT: String(await freePort()) });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await mock?.stop();
    await db?.drop();
  });

  const admin = async (gw: GatewayProcess, method: string, path: string, body?: unknown, key = adminKey) => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };
  /** A client with nothing but a base URL and a key. */
  const client = (gw: GatewayProcess, key = adminKey) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, timeout: 10_000 });
  const ask = (model: string, content = 'hi') => ({ model, messages: [{ role: 'user' as const, content }] });
  /** The model the provider was last asked for after `fn`, or the error `fn` threw. */
  const upstreamModel = async (fn: () => Promise<unknown>) => {
    const before = mock.requests.length;
    const error = await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (error) return error;
    return (mock.requests.slice(before).at(-1)?.json as { model?: string } | undefined)?.model;
  };

  /** Polls `check` until it holds; fails after `limitMs`. */
  async function within(limitMs: number, check: () => Promise<boolean>): Promise<void> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`);
      await Bun.sleep(20);
    }
  }

  test('an alias and a default config made in one process route the other\'s calls within a second', async () => {
    expect(
      (
        await admin(one, 'POST', '/integrations', {
          name: 'Across',
          slug,
          ai_provider_id: 'openai',
          key: STORED_KEY,
          configurations: { custom_host: mock.url },
          workspaces: [{ id: 'default' }],
        })
      ).status,
    ).toBe(201);
    // Process two has its sets loaded before the changes: the alias is unknown there, and nothing is the default.
    expect(await upstreamModel(() => client(two).chat.completions.create(ask('team-model')))).toBeInstanceOf(BadRequestError);

    expect((await admin(one, 'POST', '/model-aliases', { alias: 'team-model', provider: `@${slug}`, model: 'gpt-4o-mini' })).status).toBe(201);
    await within(5000, async () => (await upstreamModel(() => client(two).chat.completions.create(ask('team-model')))) === 'gpt-4o-mini');
    expect(mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${STORED_KEY}`);

    expect((await admin(one, 'PUT', '/model-aliases/team-model', { model: 'gpt-4o' })).status).toBe(200);
    await within(5000, async () => (await upstreamModel(() => client(two).chat.completions.create(ask('team-model')))) === 'gpt-4o');

    const config = await admin(one, 'POST', '/configs', { name: 'Default', is_default: true, config: { provider: `@${slug}`, override_params: { model: 'gpt-4o-mini' } } });
    expect(config.status).toBe(201);
    await within(5000, async () => (await upstreamModel(() => client(two).chat.completions.create(ask('anything')))) === 'gpt-4o-mini');

    expect((await admin(one, 'PUT', `/configs/${String(config.body.id)}`, { is_default: false })).status).toBe(200);
    await within(5000, async () => (await upstreamModel(() => client(two).chat.completions.create(ask('anything')))) instanceof BadRequestError);
  }, 30_000);

  test('another workspace\'s key reaches none of it and lists only its own models', async () => {
    const ws = await admin(one, 'POST', '/workspaces', { name: `Other ${run}`, slug: `other-${run}` });
    expect(ws.status).toBe(201);
    const key = await admin(one, 'POST', '/api-keys', { name: `other ${run}`, type: 'workspace-service', workspace_id: ws.body.id, scopes: ['completions.write'] });
    expect([200, 201]).toContain(key.status);
    const otherKey = String(key.body.key);

    expect(await upstreamModel(() => client(two, otherKey).chat.completions.create(ask('team-model')))).toBeInstanceOf(BadRequestError);
    const ids: string[] = [];
    for await (const m of client(two, otherKey).models.list()) ids.push(m.id);
    expect(ids).toEqual([]);
    // Its own alias of the same name is its own.
    expect((await admin(one, 'POST', '/model-aliases', { alias: 'team-model', provider: `@${slug}`, model: 'gpt-4o-mini', workspace_id: ws.body.id })).status).toBe(201);
    // The integration is not open to this workspace: its alias names a provider it may not use. The alias was made
    // through the other process: it reaches this one within a second, as the first test's does (until then: 400).
    const refusedStatus = async () => ((await upstreamModel(() => client(two, otherKey).chat.completions.create(ask('team-model')))) as { status?: number }).status;
    await within(5000, async () => (await refusedStatus()) === 403);
    expect(await refusedStatus()).toBe(403);
  }, 30_000);

  test('defaults.metadata changed through one process labels the other\'s log rows', async () => {
    const trace = `xp-meta-${run}`;
    expect((await admin(one, 'PUT', '/workspaces/default', { defaults: { metadata: { cost_centre: 'cc-42' } } })).status).toBe(200);
    let n = 0;
    await within(5000, async () => {
      const res = await fetch(`${two.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', 'x-gateway-trace-id': `${trace}-${++n}` },
        body: JSON.stringify(ask(`@${slug}/gpt-4o-mini`)),
      });
      expect(res.status).toBe(200);
      // The log row is written shortly after the answer: poll the table for it.
      for (let i = 0; i < 150; i++) {
        const rows = await db.query(`SELECT metadata FROM request_logs WHERE trace_id = '${trace}-${n}'`);
        if (rows.length) return jsonColumn<Record<string, string>>(rows[0]!.metadata)?.cost_centre === 'cc-42';
        await Bun.sleep(20);
      }
      return false;
    });
  }, 30_000);
});
