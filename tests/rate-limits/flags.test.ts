// POLICY_ENABLED=OFF and USAGE_LIMITS_ENABLED=OFF switch the enforcement off, on SQLite (a file) and MariaDB: a
// gateway with the flags on creates a requests policy of 1 per minute and a tokens usage-limit policy of 1 token and
// uses both up (a second call refused by each). A second gateway on the same database and the same Redis (so the
// counters it would read are the used-up ones) with one flag off serves every call the policy of that flag governs,
// closes that flag's routes and fields, and still refuses by the other flag's policy at once.
// Counters out of reach fail closed here (503), so a Redis hiccup cannot pass for enforcement switched off.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { APIError } from 'openai';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { type Json, type Stack, setClock, startStack } from './support.ts';

async function call(s: Stack, which: 'rate' | 'usage'): Promise<{ status: number; type?: unknown }> {
  try {
    await s.client(undefined, { 'x-gateway-metadata': JSON.stringify({ limit: which }) }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    return { status: 200 };
  } catch (error) {
    if (error instanceof APIError) return { status: error.status ?? 0, type: (error.error as Json | undefined)?.type };
    throw error;
  }
}

/** Waits for the tokens of the call just made to be added to the usage-limit policy (after its answer). */
async function counted(s: Stack, policyId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const policy = await s.admin<{ current_usage: { usage: number }[] }>('GET', `/policies/usage-limits/${policyId}`);
    if ((policy.body.current_usage[0]?.usage ?? 0) > 0) return;
    await Bun.sleep(10);
  }
  throw new Error('the call was never counted');
}

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
/** Every call of this file in one minute window (the gateways run in this process). */
const NOW = Math.floor(Date.now() / 60_000) * 60_000 + 1_000;

/** A gateway on the database and the shared Redis; counters out of reach answer 503 rather than let a call through. */
async function gateway(db: E2EDatabase, flags: Record<string, string> = {}): Promise<Stack> {
  const s = await startStack({ DATABASE_URL: db.url, REDIS_URL, RATE_LIMITS_FAIL_MODE: 'closed', USAGE_LIMITS_FAIL_MODE: 'closed', ...flags });
  // Its Redis connection refuses commands until it is up (no offline queue): wait for it.
  for (let i = 0; ; i++) {
    try {
      await s.gateway.state.get('flags-test-probe');
      break;
    } catch (error) {
      if (i >= 200) throw error;
      await Bun.sleep(10);
    }
  }
  setClock(NOW);
  return s;
}

describe.each(E2E_DIALECTS)('flags switch the enforcement off [%s]', (dialect) => {
  let db: E2EDatabase;
  let usagePolicy: string;
  beforeAll(async () => {
    db = await createE2EDatabase(dialect);
    const on = await gateway(db);
    try {
      const rate = await on.admin('POST', '/policies/rate-limits', {
        name: 'one a minute',
        type: 'requests',
        unit: 'rpm',
        value: 1,
        conditions: [{ key: 'metadata.limit', value: 'rate' }],
      });
      expect(rate.status).toBe(201);
      const usage = await on.admin<{ id: string }>('POST', '/policies/usage-limits', {
        name: 'one token',
        type: 'tokens',
        credit_limit: 1,
        conditions: [{ key: 'metadata.limit', value: 'usage' }],
      });
      expect(usage.status).toBe(201);
      usagePolicy = usage.body.id;
      // With the flags on, both refuse the second call.
      expect((await call(on, 'rate')).status).toBe(200);
      expect(await call(on, 'rate')).toEqual({ status: 429, type: 'rate_limit_exceeded' });
      expect((await call(on, 'usage')).status).toBe(200);
      await counted(on, usagePolicy);
      expect(await call(on, 'usage')).toEqual({ status: 429, type: 'usage_limit_exceeded' });
    } finally {
      await on.close();
    }
  }, 60_000);
  afterAll(() => db.drop());

  test('POLICY_ENABLED=OFF: the used-up rate-limit policy no longer refuses; its routes and rate_limits fields are closed; usage limits still apply', async () => {
    const off = await gateway(db, { POLICY_ENABLED: 'OFF' });
    try {
      for (let i = 0; i < 3; i++) expect((await call(off, 'rate')).status).toBe(200);
      expect((await off.admin<{ error: Json }>('GET', '/policies/rate-limits')).body.error.code).toBe('feature_disabled');
      const key = await off.admin<{ error: Json }>('POST', '/api-keys', { name: 'k', type: 'organisation-service', scopes: ['completions.write'], rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
      expect(key.status).toBe(400);
      expect(String(key.body.error.message)).toContain('rate_limits: rate limits are not enabled');
      // The usage limit is another flag's: still enforced, and used up.
      expect(await call(off, 'usage')).toEqual({ status: 429, type: 'usage_limit_exceeded' });
    } finally {
      await off.close();
    }
  }, 60_000);

  test('USAGE_LIMITS_ENABLED=OFF: the used-up usage-limit policy no longer refuses; its routes and usage_limits fields are closed; rate limits still apply', async () => {
    const off = await gateway(db, { USAGE_LIMITS_ENABLED: 'OFF' });
    try {
      for (let i = 0; i < 3; i++) expect((await call(off, 'usage')).status).toBe(200);
      expect((await off.admin<{ error: Json }>('GET', '/policies/usage-limits')).body.error.code).toBe('feature_disabled');
      const key = await off.admin<{ error: Json }>('POST', '/api-keys', { name: 'k', type: 'organisation-service', scopes: ['completions.write'], usage_limits: { credit_limit: 1 } });
      expect(key.status).toBe(400);
      expect(await call(off, 'rate')).toEqual({ status: 429, type: 'rate_limit_exceeded' });
    } finally {
      await off.close();
    }
  }, 60_000);
});
