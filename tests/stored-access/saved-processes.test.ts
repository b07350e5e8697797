/**
 * Two real gateway processes (core/server/src/main.ts) sharing one MariaDB database and Redis: a saved config
 * created or changed through one is used by the other within a second (the change is announced on Redis and the
 * other process reloads its in-memory set); a saved guardrail changed through one takes effect in the other, for
 * saved configs and for header configs it had already parsed and cached; another workspace's key is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addKey, addWorkspace, caller, chat, organisationId } from '@gateway/admin-configs/testing';
import { createDatabase } from '@gateway/db';
import type { Database } from '@gateway/sdk';
import { createE2EDatabase, type E2EDatabase } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROPAGATION_MS = 1_000;

/** Polls `check` until it holds; resolves to the milliseconds it took, or throws after `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await Bun.sleep(20);
  }
}

describe('saved configs and guardrails across two gateway processes (MariaDB + Redis)', () => {
  let db: E2EDatabase;
  let direct: Database;
  let one: OpenAIMock;
  let two: OpenAIMock;
  let a: GatewayProcess;
  let b: GatewayProcess;
  const adminKey = `gw-test-${crypto.randomUUID()}`;
  const provider = (mock: OpenAIMock, key: string) => ({ provider: 'openai', api_key: key, custom_host: mock.url });

  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    [one, two] = await Promise.all([startOpenAIMock({ apiKey: null }), startOpenAIMock({ apiKey: null })]);
    const env = { DATABASE_URL: db.url, REDIS_URL, GATEWAY_ADMIN_API_KEY: adminKey, GATEWAY_ENCRYPTION_KEY: 'saved-processes-test-encryption-key' };
    // One after the other: the first bootstraps the organisation and the key, the second finds them.
    a = await startGatewayProcess(env);
    b = await startGatewayProcess(env);
    direct = await createDatabase(db.url);
    // Both processes' Redis subscriptions are in place once a change made through each reaches the other (generous
    // limit: a loaded machine may be slow to start; the timed checks come after).
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const probe = await caller(from.url, adminKey)<{ id: string }>('POST', '/configs', { name: 'Probe', config: provider(one, 'sk-probe') });
      await within(15_000, async () => (await chat(to.url, adminKey, 'hi', { 'x-gateway-config': probe.body.id })).status === 200);
      await caller(from.url, adminKey)('DELETE', `/configs/${probe.body.id}`);
    }
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await direct?.close();
    await Promise.all([one?.stop(), two?.stop()]);
    await db?.drop();
  }, 60_000);


  test('a config created, then changed, through one process is used by the other within a second', async () => {
    const created = await caller(a.url, adminKey)<{ id: string }>('POST', '/configs', { name: 'Shared', config: provider(one, 'sk-proc-one') });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const seen = await within(PROPAGATION_MS, async () => (await chat(b.url, adminKey, 'hi', { 'x-gateway-config': id })).status === 200);
    expect(seen).toBeLessThan(PROPAGATION_MS);
    expect(one.requests.at(-1)?.headers.authorization).toBe('Bearer sk-proc-one');

    const updated = await caller(a.url, adminKey)<{ version: number }>('PUT', `/configs/${id}`, { config: provider(two, 'sk-proc-two') });
    expect(updated.body.version).toBe(2);
    const moved = await within(PROPAGATION_MS, async () => {
      const before = two.requests.length;
      await chat(b.url, adminKey, 'hi', { 'x-gateway-config': id });
      return two.requests.length > before;
    });
    expect(moved).toBeLessThan(PROPAGATION_MS);
    expect(two.requests.at(-1)?.headers.authorization).toBe('Bearer sk-proc-two');

    // Deleted through B: A refuses it within a second.
    expect((await caller(b.url, adminKey)('DELETE', `/configs/${id}`)).status).toBe(204);
    await within(PROPAGATION_MS, async () => (await chat(a.url, adminKey, 'hi', { 'x-gateway-config': id })).status === 400);
  });

  test('a guardrail changed through one process takes effect in the other, for saved and cached header configs', async () => {
    const g = await caller(a.url, adminKey)<{ id: string; slug: string }>('POST', '/guardrails', {
      name: 'Shared guard',
      entry: { deny: true, 'default.contains': { words: ['alpha'], operator: 'none' } },
    });
    expect(g.status).toBe(201);
    const saved = await caller(a.url, adminKey)<{ id: string }>('POST', '/configs', { name: 'Guarded', config: { ...provider(one, 'sk-proc-one'), input_guardrails: [g.body.slug] } });
    const header = JSON.stringify({ ...provider(one, 'sk-proc-one'), input_guardrails: [g.body.id] });
    /** `denied` (guardrail_denied), `ok`, or the error type. */
    const status = async (config: string, content: string) => {
      const res = await chat(b.url, adminKey, content, { 'x-gateway-config': config });
      if (res.status === 200) return 'ok';
      return (res.body as { error?: { type?: string } }).error?.type === 'guardrail_denied' ? 'denied' : `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
    };

    await within(PROPAGATION_MS, async () => (await status(saved.body.id, 'alpha')) === 'denied');
    await within(PROPAGATION_MS, async () => (await status(header, 'alpha')) === 'denied');
    expect(await status(saved.body.id, 'beta')).toBe('ok');
    expect(await status(header, 'beta')).toBe('ok'); // B has now parsed and cached this header config

    const put = await caller(a.url, adminKey)('PUT', `/guardrails/${g.body.id}`, { entry: { deny: true, 'default.contains': { words: ['beta'], operator: 'none' } } });
    expect(put.status).toBe(200);
    const started = performance.now();
    await within(PROPAGATION_MS, async () => (await status(saved.body.id, 'beta')) === 'denied');
    await within(PROPAGATION_MS, async () => (await status(header, 'beta')) === 'denied');
    expect(performance.now() - started).toBeLessThan(PROPAGATION_MS);
    expect(await status(saved.body.id, 'alpha')).toBe('ok');
    expect(await status(header, 'alpha')).toBe('ok');
  });

  test("another workspace's key gets 403 from either process", async () => {
    const org = await organisationId(direct);
    const otherWs = await addWorkspace(direct, org, `other-${crypto.randomUUID().slice(0, 8)}`);
    const otherKey = await addKey(direct, { organisationId: org, workspaceId: otherWs });
    const created = await caller(a.url, adminKey)<{ id: string }>('POST', '/configs', { name: 'Default only', config: provider(one, 'sk-proc-one') });
    await within(PROPAGATION_MS, async () => (await chat(b.url, adminKey, 'hi', { 'x-gateway-config': created.body.id })).status === 200);
    const before = one.requests.length;
    expect((await chat(a.url, otherKey, 'hi', { 'x-gateway-config': created.body.id })).status).toBe(403);
    expect((await chat(b.url, otherKey, 'hi', { 'x-gateway-config': created.body.id })).status).toBe(403);
    expect(one.requests.length).toBe(before);
  });
});
