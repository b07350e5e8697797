// Redis failing under the cache: a redis-server of this file's own (a child process on a free port; the shared
// 127.0.0.1:6379 is never touched), the real gateway process on it, the OpenAI mock, the official `openai` SDK.
//
// - Redis killed: every request is still answered 200, as a MISS, quickly (no command is queued while the
//   connection is down: each rejects at once), streams included; nothing is served from the cache;
// - Redis restarted (empty): the gateway reconnects by itself and caches again;
// - Redis frozen (SIGSTOP: the socket stays open, nothing answers): a command is given up after 250 ms and the
//   backend then stays out of the way for a second, so requests are answered as misses within well under a second.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type OwnRedis, startOwnRedis } from '../resilience/redis-support.ts';
import { chat, RUN, SIMPLE, streamChat, T, unique, upstream, userChat, waitFor } from './support.ts';

/** "Quickly": what a request may take while Redis is down (observed: a few milliseconds). */
const FAST_MS = 500;
/** Frozen Redis: the first request waits for the 250 ms command timeout; the bound keeps slack for a loaded machine. */
const FROZEN_MS = 1_000;

let redis: OwnRedis;
let db: E2EDatabase;
let mock: OpenAIMock;
let gw: GatewayProcess;
const prefix = `gw-cache-outage-${RUN}:`;
const slowest: Record<string, number> = {};

beforeAll(async () => {
  redis = await startOwnRedis();
  db = await createE2EDatabase('sqlite');
  mock = await startOpenAIMock({ apiKey: null });
  gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), REDIS_URL: redis.url, GATEWAY_CACHE_KEY_PREFIX: prefix });
  expect(await cacheConnections()).toBe(0); // no connection before a request uses the cache
  await chat(client(), userChat(unique('warm-up')), SIMPLE);
  await connected();
}, 60_000);

afterAll(async () => {
  console.info(`[cache redis-outage] slowest answer per phase (ms): ${JSON.stringify(slowest)}`);
  await gw?.stop();
  await mock?.stop();
  await db?.drop();
  await redis?.close();
}, 30_000);

beforeEach(() => mock.reset());

/** Connections of the cache (named gateway-cache) to the redis-server. */
async function cacheConnections(): Promise<number> {
  const list = String(await redis.command('client', 'list').catch(() => ''));
  return list.split('\n').filter((l) => l.includes('name=gateway-cache')).length;
}

/** The cache's own connection is up. */
async function connected(): Promise<void> {
  await waitFor('the cache connected to redis-server', async () => (await cacheConnections()) === 1, 10_000, 50);
}

function client(): OpenAI {
  return new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-provider',
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: { 'x-gateway-api-key': gw.adminKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url },
  });
}

async function timed<R>(phase: string, fn: () => Promise<R>): Promise<{ value: R; ms: number }> {
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  slowest[phase] = Math.max(slowest[phase] ?? 0, Math.round(ms));
  return { value, ms };
}

/** A miss, then (once the store reached Redis) a hit: the cache works. */
async function expectCaching(text: string): Promise<void> {
  const body = userChat(unique(text));
  expect((await chat(client(), body, SIMPLE)).status).toBe('MISS');
  await waitFor('a hit', async () => (await chat(client(), body, SIMPLE)).status === 'HIT', 5_000, 50);
}

describe('Redis failing under the cache', () => {
  test('killed: requests are answered at once as misses, streams too', async () => {
    const cached = userChat(unique('Cached before the outage'));
    await chat(client(), cached, SIMPLE);
    await waitFor('a hit', async () => (await chat(client(), cached, SIMPLE)).status === 'HIT', 5_000, 50);
    mock.reset();

    await redis.stop('SIGKILL');
    for (let i = 0; i < 10; i++) {
      const body = i % 2 ? cached : userChat(unique(`During the outage ${i}`));
      const { value, ms } = await timed('redis down', () => chat(client(), body, SIMPLE));
      expect(value.status).toBe('MISS');
      expect(value.data.choices[0]?.message.content).toBe(`You said: ${body.messages[0]?.content as string}`);
      expect(ms).toBeLessThan(FAST_MS);
    }
    const { value: streamed, ms } = await timed('redis down, stream', () => streamChat(client(), cached, SIMPLE));
    expect(streamed.status).toBe('MISS');
    expect(streamed.content).toBe(`You said: ${cached.messages[0]?.content as string}`);
    expect(ms).toBeLessThan(FAST_MS);
    expect(upstream(mock)).toBe(11); // every request went to the provider
  }, T);

  test('restarted: the gateway reconnects by itself and caches again', async () => {
    await redis.restart();
    await connected();
    await expectCaching('After the restart');
  }, T);

  test('frozen: requests are answered as misses within a second', async () => {
    await expectCaching('Before the freeze');
    redis.freeze();
    try {
      for (let i = 0; i < 6; i++) {
        const { value, ms } = await timed('redis frozen', () => chat(client(), userChat(unique(`While frozen ${i}`)), SIMPLE));
        expect(value.status).toBe('MISS');
        expect(ms).toBeLessThan(FROZEN_MS);
      }
    } finally {
      redis.thaw();
    }
    await expectCaching('After the thaw');
  }, T);

  test('each outage is logged once, and each recovery', () => {
    const lines = gw.output().split('\n');
    const down = lines.filter((l) => l.includes('response cache: Redis unavailable')).length;
    const back = lines.filter((l) => l.includes('response cache: Redis is back')).length;
    expect(down).toBeGreaterThanOrEqual(2); // killed, frozen
    expect(down).toBeLessThanOrEqual(2);
    expect(back).toBe(down);
  });
});
