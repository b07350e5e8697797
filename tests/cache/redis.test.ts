// Redis shared by two gateway processes: both real servers on one SQLite database (so one organisation and one
// workspace) and the shared 127.0.0.1:6379 under a key prefix of this run (GATEWAY_CACHE_KEY_PREFIX; removed at the
// end, nothing else is touched). An answer stored by process 1 is a hit on process 2 (whole, streamed, semantic),
// and entries carry a TTL of max_age.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import Redis from 'ioredis';
import OpenAI from 'openai';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { cacheHeaders, chat, RUN, SEMANTIC, SIMPLE, streamChat, T, unique, upstream, userChat, waitFor } from './support.ts';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `gw-cache-test-${RUN}:`;
let redis: Redis;
let db: E2EDatabase;
let mock: OpenAIMock;
const gws: GatewayProcess[] = [];
const adminKey = `gw-test-${crypto.randomUUID()}`;

async function keys(): Promise<string[]> {
  return redis.keys(`${prefix}*`);
}

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  db = await createE2EDatabase('sqlite');
  mock = await startOpenAIMock({ apiKey: null });
  const env = { DATABASE_URL: db.url, REDIS_URL, GATEWAY_CACHE_KEY_PREFIX: prefix, GATEWAY_ADMIN_API_KEY: adminKey };
  // One after the other: the first bootstraps the database, the second finds it.
  for (let i = 0; i < 2; i++) gws.push(await startGatewayProcess({ ...env, PORT: String(await freePort()) }));
  // Each process's cache opens its own connection (named gateway-cache) on the first request that uses the cache.
  for (let i = 0; i < 2; i++) await chat(client(i), userChat(unique('warm-up')), SIMPLE);
  await waitFor('both caches connected', async () => ((await redis.client('LIST')) as string).split('\n').filter((l) => l.includes('name=gateway-cache')).length >= 2, 10_000);
}, 60_000);

afterAll(async () => {
  for (const gw of gws) await gw.stop();
  await mock?.stop();
  await db?.drop();
  if (redis) {
    const left = await keys();
    if (left.length) await redis.del(...left);
    redis.disconnect();
  }
}, 30_000);

beforeEach(() => mock.reset());

function client(i: number): OpenAI {
  const gw = gws[i] as GatewayProcess;
  return new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-provider',
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: { 'x-gateway-api-key': adminKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url },
  });
}

/** Waits until the run's keyspace holds at least `n` keys (stores are written after the answer). */
const stored = (n: number) => waitFor(`${n} cache keys in Redis`, async () => (await keys()).length >= n, 5_000);

describe('Redis shared by two gateway processes', () => {
  test('an answer stored by process 1 is a hit on process 2', async () => {
    const body = userChat(unique('Shared through Redis'));
    const before = (await keys()).length;
    const a = await chat(client(0), body, SIMPLE);
    expect(a.status).toBe('MISS');
    await stored(before + 1);
    const b = await chat(client(1), body, SIMPLE);
    expect(b.status).toBe('HIT');
    expect(b.data).toEqual(a.data);
    expect((await chat(client(0), body, SIMPLE)).status).toBe('HIT');
    expect(upstream(mock)).toBe(1);
  }, T);

  test('streams: stored by process 1, replayed by process 2', async () => {
    const body = userChat(unique('Streamed through Redis'));
    const before = (await keys()).length;
    const a = await streamChat(client(0), { ...body, stream_options: { include_usage: true } }, SIMPLE);
    expect(a.status).toBe('MISS');
    await stored(before + 1);
    const b = await streamChat(client(1), body, SIMPLE);
    expect(b.status).toBe('HIT');
    expect(b.content).toBe(a.content);
    const whole = await chat(client(1), body, SIMPLE);
    expect(whole.status).toBe('HIT');
    expect(whole.data.choices[0]?.message.content).toBe(a.content);
    expect(upstream(mock)).toBe(1);
  }, T);

  test('semantic: a reworded prompt on process 2 hits what process 1 stored', async () => {
    const h = { ...SEMANTIC, 'x-gateway-cache-namespace': `${RUN}-redis-semantic` };
    const before = (await keys()).length;
    expect((await chat(client(0), userChat('What is the boiling point of water at sea level?'), h)).status).toBe('SEMANTIC_MISS');
    await stored(before + 2); // the answer and its partition's index
    expect((await chat(client(1), userChat('what is the boiling point of water at sea level'), h)).status).toBe('SEMANTIC_HIT');
    expect((await chat(client(1), userChat('What is the boiling point of milk at sea level?'), h)).status).toBe('SEMANTIC_MISS');
    expect(upstream(mock)).toBe(2);
  }, T);

  test('entries expire with max_age (Redis TTL)', async () => {
    const body = userChat(unique('Expiring in Redis'));
    const headers = cacheHeaders({ mode: 'simple', max_age: 1 });
    const before = new Set(await keys());
    expect((await chat(client(0), body, headers)).status).toBe('MISS');
    await stored(before.size + 1);
    const key = (await keys()).find((k) => !before.has(k)) as string;
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1);
    expect((await chat(client(1), body, headers)).status).toBe('HIT');
    await Bun.sleep(1_100);
    expect((await chat(client(1), body, headers)).status).toBe('MISS');
    // nothing in clear: keys are hashes under the prefix, no value holds the provider key
    expect(key.slice(prefix.length)).toMatch(/^[0-9a-f]{64}$/);
    for (const k of await keys()) expect((await redis.getBuffer(k))?.toString('latin1') ?? '').not.toContain('sk-provider');
  }, T);
});
