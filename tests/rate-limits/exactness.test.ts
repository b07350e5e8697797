// Exactness across processes: three real gateway processes sharing one MariaDB database and one Redis (a
// redis-server of this suite's own, so stopping it touches nobody else), 300 concurrent calls through the openai SDK
// against a policy of 100 requests per minute: exactly 100 answered 200 and 200 answered 429. A tokens policy: the
// overshoot is bounded by the calls in flight when the limit was reached. Then Redis is stopped: the documented
// behaviour (RATE_LIMITS_FAIL_MODE open: served without limits; closed: 503 limits_unavailable), never a 500.

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createE2EDatabase, type E2EDatabase } from '../helpers/e2e-database.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type OwnRedis, startOwnRedis } from '../resilience/redis-support.ts';
import { createPolicy as create, processClient, startGateways, status, tally } from './processes.ts';

const ADMIN_KEY = `gw-exact-${crypto.randomUUID()}`;
let db: E2EDatabase;
let redis: OwnRedis;
let mock: OpenAIMock;
let gws: GatewayProcess[] = [];

beforeAll(async () => {
  [db, redis, mock] = await Promise.all([createE2EDatabase('mysql'), startOwnRedis(), startOpenAIMock({ apiKey: null })]);
  // The third fails closed.
  gws = await startGateways({ DATABASE_URL: db.url, REDIS_URL: redis.url, GATEWAY_ADMIN_API_KEY: ADMIN_KEY }, [{}, {}, { RATE_LIMITS_FAIL_MODE: 'closed' }]);
}, 90_000);

afterAll(async () => {
  await Promise.all(gws.map((g) => g.stop()));
  await Promise.all([mock?.stop(), redis?.close(), db?.drop()]);
}, 60_000);

const client = (gw: GatewayProcess, c: string) => processClient(gw, ADMIN_KEY, mock, c);
const createPolicy = (body: Record<string, unknown>) => create(gws[0]!, ADMIN_KEY, '/policies/rate-limits', body);

/** Waits until at least `seconds` remain in the current UTC minute (the policy's window). */
async function roomInMinute(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await Bun.sleep(left + 50);
}

test('300 concurrent calls over three processes against 100 rpm: exactly 100 admitted, 200 refused', async () => {
  await createPolicy({ name: 'exact', type: 'requests', unit: 'rpm', value: 100, conditions: [{ key: 'metadata.case', value: 'exact' }] });
  await roomInMinute(30);
  const before = mock.requests.length;
  const codes = await Promise.all(Array.from({ length: 300 }, (_, i) => status(client(gws[i % 3]!, 'exact'))));
  expect(tally(codes)).toEqual({ 200: 100, 429: 200 });
  expect(mock.requests.length - before).toBe(100); // a refused call reaches no provider
}, 60_000);

test('a tokens policy: the limit is reached, the overshoot bounded by the calls in flight', async () => {
  const value = 600;
  await createPolicy({ name: 'exact-tokens', type: 'tokens', unit: 'rph', value, conditions: [{ key: 'metadata.case', value: 'tokens' }] });
  // 30 calls at a time (10 per process), 300 in all; each answer's total tokens is the same.
  const concurrency = 30;
  const per = (await client(gws[0]!, 'probe').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }] })).usage!.total_tokens;
  const codes: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (next < 300) {
        next++;
        codes.push(await status(client(gws[w % 3]!, 'tokens')));
      }
    }),
  );
  const t = tally(codes);
  expect(Object.keys(t).sort()).toEqual(['200', '429']);
  const consumed = t[200]! * per;
  // Reached: admitted calls spent at least the value …
  expect(consumed).toBeGreaterThanOrEqual(value);
  // … and every call admitted after the counter reached it was in flight then: fewer than `concurrency` of them.
  expect(consumed).toBeLessThan(value + concurrency * per);
}, 120_000);

test('Redis stopped: fail open serves without limits, fail closed answers 503; never a 500, never a hang', async () => {
  await createPolicy({ name: 'outage', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'metadata.case', value: 'outage' }] });
  await redis.stop('SIGKILL');
  try {
    const open = await Promise.all(Array.from({ length: 6 }, (_, i) => status(client(gws[i % 2]!, 'outage'))));
    expect(open).toEqual([200, 200, 200, 200, 200, 200]);
    const closed = await Promise.all(Array.from({ length: 3 }, () => status(client(gws[2]!, 'outage'))));
    expect(closed).toEqual([503, 503, 503]);
    const raw = await fetch(`${gws[2]!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk', 'content-type': 'application/json', 'x-gateway-metadata': '{"case":"outage"}' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(raw.status).toBe(503);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe('limits_unavailable');
  } finally {
    await redis.restart();
  }
}, 60_000);
