// Usage-limit policies end to end, through the official openai SDK against an in-process gateway (on SQLite and on
// MariaDB, memory counters) with the openai mock behind it and a local SMTP server: the /policies/usage-limits routes
// and their shapes, tokens and cost limits exhausted then raised (429 usage_limit_exceeded, no provider call, logged;
// the alert e-mails, sent again after a raise), periodic reset with the limits' clock moved by the test (last_reset_at
// stored), group_by api_key, archiving. Each test isolates its policies with a metadata condition of its own
// (`metadata.case`). The cost is the pricing plugin's COST_FIGURE (the openai catalogue's gpt-4o-mini prices), read
// back through the gateway's pricing service so the test does not restate the prices.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { UsageLimitServices, usageLimits } from '@gateway/plugin-usage-limits';
import { limitsClock } from '@gateway/policy-kit';
import { Services } from '@gateway/sdk';
import { APIError } from 'openai';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { type SmtpMock, startSmtpServer } from '../mocks/smtp-server.ts';
import { type Json, type Stack, setClock, startStack } from '../rate-limits/support.ts';

let s: Stack;
let smtp: SmtpMock;
const OWNER = 'ul-admin@example.test';

type Policy = Json & { id: string; current_usage: { group: Json; usage: number }[] };
const meta = (c: string) => ({ 'x-gateway-metadata': JSON.stringify({ case: c }) });

async function policy(body: Json): Promise<Policy> {
  const r = await s.admin<Policy>('POST', '/policies/usage-limits', body);
  expect(r.status).toBe(201);
  return r.body;
}

const get = async (id: string) => (await s.admin<Policy>('GET', `/policies/usage-limits/${id}`)).body;

/** One chat call: its status, usage and error. */
async function call(c: string, key?: string): Promise<{ status: number; totalTokens?: number; error?: APIError }> {
  try {
    const res = await s.client(key, meta(c)).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
    return { status: 200, totalTokens: res.usage?.total_tokens };
  } catch (error) {
    if (error instanceof APIError) return { status: error.status ?? 0, error };
    throw error;
  }
}

/** Waits until the policy's usage (of its first group, or of all) satisfies `ok` (consumption is added after the answer). */
async function usageUntil(id: string, ok: (usage: number) => boolean): Promise<number> {
  let last = Number.NaN;
  for (let i = 0; i < 200; i++) {
    const p = await get(id);
    last = p.current_usage.reduce((sum, g) => sum + g.usage, 0);
    if (ok(last)) return last;
    await Bun.sleep(10);
  }
  throw new Error(`usage never reached the expected value; last ${last}`);
}

for (const dialect of E2E_DIALECTS) {
  describe(`[${dialect}]`, () => {
    // A database of each dialect and an SMTP server of its own (so no mail of the other run can match).
    let db: E2EDatabase;
    beforeAll(async () => {
      [smtp, db] = await Promise.all([startSmtpServer(), createE2EDatabase(dialect)]);
      s = await startStack({ ...smtp.env, DATABASE_URL: db.url, USAGE_LIMITS_RESET_INTERVAL_MS: '0' });
      const user = await s.admin('POST', '/users', { email: OWNER, role: 'admin' });
      expect(user.status).toBe(201);
    }, 30_000); // a hang guard: a database, an SMTP server and a gateway stack can take over 5 s on a loaded CI machine
    afterAll(async () => {
      await s.close();
      await smtp.close();
      await db.drop();
    });

    describe('the /policies/usage-limits routes', () => {
      test('create, read, list with filters, update, archive: the shapes; validation', async () => {
        const created = await policy({
          name: 'shape',
          type: 'cost',
          credit_limit: 12.5,
          alert_threshold: 10,
          periodic_reset: 'monthly',
          conditions: [{ key: 'metadata.case', value: 'shape' }],
          group_by: [{ key: 'api_key' }],
          workspace_id: 'default',
        });
        expect(Object.keys(created).sort()).toEqual(
          [
            'alert_threshold', 'conditions', 'created_at', 'credit_limit', 'current_usage', 'group_by', 'id', 'last_reset_at', 'last_updated_at', 'name',
            'next_usage_reset_at', 'object', 'organisation_id', 'periodic_reset', 'periodic_reset_days', 'status', 'type', 'workspace_id',
          ].sort(),
        );
        expect(created).toMatchObject({ object: 'policy_usage_limits', type: 'cost', credit_limit: 12.5, alert_threshold: 10, periodic_reset: 'monthly', periodic_reset_days: null, last_reset_at: null, status: 'active', current_usage: [] });
        // Monthly without a date: the 1st of next month, midnight UTC.
        const now = new Date();
        expect(created.next_usage_reset_at).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());

        const bad = await s.admin<{ error: Json }>('POST', '/policies/usage-limits', { name: 'x', type: 'cost', credit_limit: 5, periodic_reset: 'weekly', periodic_reset_days: 3 });
        expect(bad.status).toBe(400);
        expect(bad.body.error.message).toContain('mutually exclusive');
        expect((await s.admin('POST', '/policies/usage-limits', { name: 'x', type: 'cost', credit_limit: 5, periodic_reset_days: 366 })).status).toBe(400);
        expect((await s.admin('POST', '/policies/usage-limits', { name: 'x', type: 'cost', credit_limit: 5, alert_threshold: 5 })).status).toBe(400);
        expect((await s.admin('POST', '/policies/usage-limits', { name: 'x', type: 'tokens', credit_limit: 5.5 })).status).toBe(400);
        expect((await s.admin('POST', '/policies/usage-limits', { name: 'x', type: 'cost', credit_limit: 5, group_by: [{ key: 'model' }] })).status).toBe(400);

        // next_usage_reset_at is normalised to midnight UTC.
        const later = Date.now() + 3 * 86_400_000;
        const dated = await s.admin<Policy>('PUT', `/policies/usage-limits/${created.id}`, { next_usage_reset_at: new Date(later).toISOString(), periodic_reset_days: 30, name: 'renamed' });
        expect(dated.status).toBe(200);
        expect(dated.body).toMatchObject({ name: 'renamed', periodic_reset: null, periodic_reset_days: 30 });
        expect(dated.body.next_usage_reset_at).toBe(new Date(later - (later % 86_400_000)).toISOString());
        expect((await s.admin('PUT', `/policies/usage-limits/${created.id}`, { type: 'tokens' })).status).toBe(400); // the type is fixed

        const listed = await s.admin<{ object: string; data: Json[]; total: number }>('GET', '/policies/usage-limits?workspace_id=default&type=cost&status=active');
        expect(listed.body.object).toBe('list');
        const item = listed.body.data.find((p) => p.id === created.id)!;
        expect(item).toBeDefined();
        expect('object' in item).toBe(false);
        expect(item.current_usage).toEqual([]);
        expect((await s.admin<{ data: Json[] }>('GET', '/policies/usage-limits?type=tokens')).body.data.some((p) => p.id === created.id)).toBe(false);
        expect((await s.admin('GET', '/policies/usage-limits?type=money')).status).toBe(400);

        expect((await s.admin('DELETE', `/policies/usage-limits/${created.id}`)).status).toBe(204);
        expect((await get(created.id)).status).toBe('archived');
        expect((await s.admin('GET', `/policies/usage-limits/${created.id}?status=active`)).status).toBe(404);
      });
    });

    describe('enforcement', () => {
      test('tokens: exhausted, 429 usage_limit_exceeded naming the policy, no provider call, logged; alerts; a raise lets calls through and the alerts go again', async () => {
        const first = await call('tokens-probe');
        expect(first.status).toBe(200);
        const perCall = first.totalTokens!;
        expect(perCall).toBeGreaterThan(0);
        const p = await policy({
          name: 'tokens budget',
          type: 'tokens',
          credit_limit: perCall * 2,
          alert_threshold: perCall,
          periodic_reset: 'weekly',
          conditions: [{ key: 'metadata.case', value: 'tokens' }],
        });
        expect((await call('tokens')).status).toBe(200);
        await usageUntil(p.id, (u) => u === perCall);
        // Past the threshold: the threshold alert, to the organisation's admins.
        const threshold = await smtp.waitFor((m) => m.subject === 'Usage limit "tokens budget" passed its alert threshold');
        expect(threshold.to).toContain(OWNER);
        expect(threshold.text).toContain(`policy ${p.id}`);
        expect((await call('tokens')).status).toBe(200);
        await usageUntil(p.id, (u) => u === perCall * 2);

        const before = s.mock.requests.length;
        const refused = await call('tokens');
        expect(refused.status).toBe(429);
        expect(s.mock.requests.length).toBe(before); // the provider was not called
        const body = refused.error!.error as Json;
        expect(body).toMatchObject({ type: 'usage_limit_exceeded', code: 'usage_limit_exceeded' });
        expect(String(body.message)).toContain(`policy ${p.id}`);
        const retryAfter = Number(refused.error!.headers?.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(7 * 86_400);
        await smtp.waitFor((m) => m.subject === 'Usage limit "tokens budget" is exhausted');
        const logged = await s.logs((r) => r.status === 429 && JSON.stringify(r.metadata ?? {}).includes('"tokens"'));
        expect(logged.length).toBeGreaterThan(0);

        // Raised: calls pass again, and the raise reset both alerts: passing the threshold alerts again.
        const raised = await s.admin<Policy>('PUT', `/policies/usage-limits/${p.id}`, { credit_limit: perCall * 5 });
        expect(raised.body.current_usage).toEqual([{ group: {}, usage: perCall * 2 }]);
        expect((await call('tokens')).status).toBe(200);
        await usageUntil(p.id, (u) => u === perCall * 3);
        await s.gateway.service(UsageLimitServices.alerts).flush();
        const thresholds = () => smtp.messages.filter((m) => m.subject === 'Usage limit "tokens budget" passed its alert threshold').length;
        const exhaustions = () => smtp.messages.filter((m) => m.subject === 'Usage limit "tokens budget" is exhausted').length;
        expect([thresholds(), exhaustions()]).toEqual([2, 1]);
        // Raising the threshold alone resets the threshold alert only.
        expect((await s.admin('PUT', `/policies/usage-limits/${p.id}`, { alert_threshold: perCall * 3.5 })).status).toBe(200);
        expect((await call('tokens')).status).toBe(200);
        await usageUntil(p.id, (u) => u === perCall * 4);
        await s.gateway.service(UsageLimitServices.alerts).flush();
        expect([thresholds(), exhaustions()]).toEqual([3, 1]);
        expect((await call('tokens')).status).toBe(200);
        await usageUntil(p.id, (u) => u === perCall * 5);
        expect((await call('tokens')).status).toBe(429);
        await s.gateway.service(UsageLimitServices.alerts).flush();
        expect([thresholds(), exhaustions()]).toEqual([3, 2]);
      });

      test('cost: the call’s cost (COST_FIGURE, cents) is added in USD; exhausted after it; GET shows it', async () => {
        const probe = await call('cost-probe');
        const pricing = s.gateway.service(Services.pricing);
        const cost = pricing.costOf({
          provider: 'openai',
          model: 'gpt-4o-mini',
          usage: await lastUsage(),
        });
        expect(probe.status).toBe(200);
        expect(cost).not.toBeNull();
        const dollars = cost!.total / 100;
        const p = await policy({ name: 'cost budget', type: 'cost', credit_limit: dollars * 1.5, conditions: [{ key: 'metadata.case', value: 'cost' }] });
        expect((await call('cost')).status).toBe(200);
        const used = await usageUntil(p.id, (u) => u > 0);
        expect(used).toBeCloseTo(dollars, 6);
        expect((await call('cost')).status).toBe(200); // below 1.5 × one call: admitted, and then over
        await usageUntil(p.id, (u) => u > dollars * 1.5);
        const refused = await call('cost');
        expect(refused.status).toBe(429);
        expect(String((refused.error!.error as Json).message)).toContain(`policy ${p.id} allows USD`);
        // No reset: no retry-after.
        expect(refused.error!.headers?.get('retry-after')).toBeNull();
      });

      test('periodic reset: the counters restart at the boundary (the clock moved), last_reset_at is stored', async () => {
        const p = await policy({ name: 'daily', type: 'tokens', credit_limit: 1, periodic_reset_days: 1, conditions: [{ key: 'metadata.case', value: 'daily' }] });
        expect((await call('daily')).status).toBe(200);
        await usageUntil(p.id, (u) => u > 0);
        expect((await call('daily')).status).toBe(429);
        const boundary = Date.parse(p.next_usage_reset_at as string);
        setClock(boundary + 1000);
        try {
          expect((await get(p.id)).current_usage).toEqual([{ group: {}, usage: 0 }]);
          expect((await call('daily')).status).toBe(200);
          await s.gateway.service(UsageLimitServices.resets).tick();
          const after = await get(p.id);
          expect(after.last_reset_at).toBe(new Date(boundary).toISOString());
          expect(after.next_usage_reset_at).toBe(new Date(boundary + 86_400_000).toISOString());
          const rows = await s.gateway.service(Services.database).select(usageLimits, { fresh: true });
          const row = rows.find((r) => r.id === p.id)!;
          expect(row.last_reset_at).toBe(boundary);
          expect(row.period_start).toBe(boundary);
        } finally {
          limitsClock.now = () => Date.now();
        }
      });

      test('group_by api_key: each key its own budget, each group shown; archived stops applying', async () => {
        const a = await s.newKey();
        const b = await s.newKey();
        const p = await policy({ name: 'per key', type: 'tokens', credit_limit: 1, conditions: [{ key: 'metadata.case', value: 'per-key' }], group_by: [{ key: 'api_key' }] });
        expect((await call('per-key', a.key)).status).toBe(200);
        await usageUntil(p.id, (u) => u > 0);
        expect((await call('per-key', a.key)).status).toBe(429);
        expect((await call('per-key', b.key)).status).toBe(200);
        const both = await usageUntil(p.id, () => true);
        expect(both).toBeGreaterThan(0);
        for (let i = 0; i < 100 && (await get(p.id)).current_usage.length < 2; i++) await Bun.sleep(10);
        const groups = (await get(p.id)).current_usage.map((g) => g.group.api_key).sort();
        expect(groups).toEqual([a.id, b.id].sort());
        expect((await call('per-key', b.key)).status).toBe(429);

        expect((await s.admin('DELETE', `/policies/usage-limits/${p.id}`)).status).toBe(204);
        expect((await call('per-key', a.key)).status).toBe(200);
        expect((await call('per-key', b.key)).status).toBe(200);
      });
    });

    /** The usage of the mock's last answer, as the gateway reads it. */
    async function lastUsage() {
      const res = await s.client(undefined, meta('probe-usage')).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
      return { promptTokens: res.usage!.prompt_tokens, completionTokens: res.usage!.completion_tokens, totalTokens: res.usage!.total_tokens };
    }
  });
}

test('USAGE_LIMITS_ENABLED=OFF: the routes answer 403 feature_disabled', async () => {
  const off = await startStack({ USAGE_LIMITS_ENABLED: 'OFF' });
  try {
    const r = await off.admin<{ error: Json }>('GET', '/policies/usage-limits');
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('feature_disabled');
  } finally {
    await off.close();
  }
});
