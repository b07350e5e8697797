// The usage_limits of an API key, a virtual key and an integration's workspace access, end to end through the openai
// SDK against an in-process gateway (on SQLite and on MariaDB, memory counters) with the openai mock behind it: set on
// the object, shown on its answers with the current usage, enforced (429 usage_limit_exceeded naming the object, no
// provider call), raised, reset at the boundary with the limits' clock moved (last_reset_at on the object's answers,
// and on the integration), and the alert e-mail of a workspace-user key going to its user as well as to the admins.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { UsageLimitServices } from '@gateway/plugin-usage-limits';
import { limitsClock } from '@gateway/policy-kit';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { type SmtpMock, startSmtpServer } from '../mocks/smtp-server.ts';
import { type Json, type Stack, setClock, startStack } from '../rate-limits/support.ts';

let s: Stack;
let smtp: SmtpMock;
const ADMIN = 'subjects-admin@example.test';

type Limits = { type: string; credit_limit: number; current_usage: number; last_reset_at: string | null; next_usage_reset_at: string | null };

async function call(client: OpenAI): Promise<{ status: number; tokens?: number; error?: APIError }> {
  try {
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
    return { status: 200, tokens: res.usage?.total_tokens };
  } catch (error) {
    if (error instanceof APIError) return { status: error.status ?? 0, error };
    throw error;
  }
}

async function until(read: () => Promise<number>, ok: (v: number) => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (ok(await read())) return;
    await Bun.sleep(10);
  }
  throw new Error(`never reached; last ${await read()}`);
}

/** Exhausts a limit of one call's tokens, raises it, and checks what a refusal says. */
async function exhaustThenRaise(client: OpenAI, usage: () => Promise<Limits>, raise: (credit: number) => Promise<void>, names: string) {
  const first = await call(client);
  expect(first.status).toBe(200);
  await until(async () => (await usage()).current_usage, (u) => u === first.tokens);
  const before = s.mock.requests.length;
  const refused = await call(client);
  expect(refused.status).toBe(429);
  expect(s.mock.requests.length).toBe(before);
  expect((refused.error!.error as Json).type).toBe('usage_limit_exceeded');
  expect(String((refused.error!.error as Json).message)).toContain(names);
  await raise(first.tokens! * 2);
  expect((await usage()).credit_limit).toBe(first.tokens! * 2);
  expect((await call(client)).status).toBe(200);
}

for (const dialect of E2E_DIALECTS) {
  describe(`[${dialect}]`, () => {
    // A database of each dialect and an SMTP server of its own (so no mail of the other run can match).
    let db: E2EDatabase;
    beforeAll(async () => {
      [smtp, db] = await Promise.all([startSmtpServer(), createE2EDatabase(dialect)]);
      s = await startStack({ ...smtp.env, DATABASE_URL: db.url, USAGE_LIMITS_RESET_INTERVAL_MS: '0' });
      expect((await s.admin('POST', '/users', { email: ADMIN, role: 'admin' })).status).toBe(201);
    }, 30_000); // a hang guard: a database, an SMTP server and a gateway stack can take over 5 s on a loaded CI machine
    afterAll(async () => {
      await s.close();
      await smtp.close();
      await db.drop();
    });

    describe('usage_limits on objects', () => {
      test('an API key: set, shown, enforced, raised, refused field values, removed', async () => {
        const bad = await s.admin<{ error: Json }>('POST', '/api-keys', {
          name: 'limited',
          type: 'organisation-service',
          scopes: ['completions.write'],
          usage_limits: { credit_limit: 5, periodic_reset: 'weekly', periodic_reset_days: 2 },
        });
        expect(bad.status).toBe(400);
        expect(bad.body.error.message).toContain('usage_limits.periodic_reset_days');
        const created = await s.admin<Json & { id: string; key: string; usage_limits: Limits }>('POST', '/api-keys', {
          name: 'limited',
          type: 'organisation-service',
          scopes: ['completions.write'],
          usage_limits: { type: 'tokens', credit_limit: 1, periodic_reset: 'monthly' },
        });
        expect(created.status).toBe(201);
        expect(created.body.usage_limits).toMatchObject({ type: 'tokens', credit_limit: 1, alert_threshold: null, periodic_reset: 'monthly', current_usage: 0, last_reset_at: null });
        const usage = async () => (await s.admin<{ usage_limits: Limits }>('GET', `/api-keys/${created.body.id}`)).body.usage_limits;
        // The first call passes (usage 0 < 1), then the key's own limit refuses.
        await exhaustThenRaise(
          s.client(created.body.key),
          usage,
          async (credit) => {
            // Tokens are whole: the raise must be one.
            expect((await s.admin('PUT', `/api-keys/${created.body.id}`, { usage_limits: { credit_limit: credit } })).status).toBe(200);
          },
          `api_key ${created.body.id}`,
        );
        const listed = await s.admin<{ data: (Json & { usage_limits: Limits | null })[] }>('GET', '/api-keys?page_size=1000');
        expect(listed.body.data.find((k) => k.id === created.body.id)?.usage_limits?.type).toBe('tokens');
        expect(listed.body.data.find((k) => k.id !== created.body.id)?.usage_limits).toBeNull();
        expect((await s.admin('PUT', `/api-keys/${created.body.id}`, { usage_limits: null })).status).toBe(200);
        expect(await usage()).toBeNull();
      });

      test('an API key: periodic reset with the clock moved; last_reset_at on the key', async () => {
        const created = await s.admin<Json & { id: string; key: string; usage_limits: Limits }>('POST', '/api-keys', {
          name: 'daily',
          type: 'organisation-service',
          scopes: ['completions.write'],
          usage_limits: { type: 'tokens', credit_limit: 1, periodic_reset_days: 1 },
        });
        const client = s.client(created.body.key);
        expect((await call(client)).status).toBe(200);
        await until(async () => (await s.admin<{ usage_limits: Limits }>('GET', `/api-keys/${created.body.id}`)).body.usage_limits.current_usage, (u) => u > 0);
        expect((await call(client)).status).toBe(429);
        const boundary = Date.parse(created.body.usage_limits.next_usage_reset_at!);
        setClock(boundary + 1);
        try {
          expect((await call(client)).status).toBe(200);
          await s.gateway.service(UsageLimitServices.resets).tick();
          const key = (await s.admin<Json & { usage_limits: Limits }>('GET', `/api-keys/${created.body.id}`)).body;
          expect(key.last_reset_at).toBe(new Date(boundary).toISOString());
          expect(key.usage_limits.last_reset_at).toBe(new Date(boundary).toISOString());
        } finally {
          limitsClock.now = () => Date.now();
        }
      });

      test('a virtual key: set, enforced by slug, raised; last_reset_at shown', async () => {
        const vk = await s.admin<Json & { id: string; slug: string; usage_limits: Limits }>('POST', '/virtual-keys', {
          name: 'limited vk',
          provider: 'openai',
          key: 'sk-limited-virtual-key-0001',
          configurations: { custom_host: s.mock.url },
          usage_limits: { type: 'tokens', credit_limit: 1 },
        });
        expect(vk.status).toBe(201);
        expect(vk.body.usage_limits).toMatchObject({ type: 'tokens', credit_limit: 1, current_usage: 0 });
        expect(vk.body.last_reset_at).toBeNull();
        await exhaustThenRaise(
          s.storedClient({ 'x-gateway-virtual-key': vk.body.slug }),
          async () => (await s.admin<{ usage_limits: Limits }>('GET', `/virtual-keys/${vk.body.id}`)).body.usage_limits,
          async (credit) => {
            expect((await s.admin('PUT', `/virtual-keys/${vk.body.id}`, { usage_limits: { credit_limit: credit } })).status).toBe(200);
          },
          `virtual_key ${vk.body.id}`,
        );
      });

      test('an integration workspace: set on the access, enforced through @slug, raised; reset sets last_reset_at on the integration', async () => {
        const slug = `ul-${crypto.randomUUID().slice(0, 8)}`;
        const integration = await s.admin<Json & { id: string }>('POST', '/integrations', {
          name: 'Limited',
          slug,
          ai_provider_id: 'openai',
          key: 'sk-limited-integration-0001',
          configurations: { custom_host: s.mock.url },
          workspaces: [{ id: 'default' }],
        });
        expect(integration.status).toBe(201);
        const put = await s.admin<{ data: (Json & { usage_limits: Limits })[] }>('PUT', `/integrations/${integration.body.id}/workspaces`, {
          workspaces: [{ id: 'default', usage_limits: { type: 'tokens', credit_limit: 1, periodic_reset: 'weekly' } }],
        });
        expect(put.status).toBe(200);
        expect(put.body.data[0]?.usage_limits).toMatchObject({ type: 'tokens', credit_limit: 1, periodic_reset: 'weekly' });
        const access = async () => (await s.admin<{ data: (Json & { usage_limits: Limits })[] }>('GET', `/integrations/${integration.body.id}/workspaces`)).body.data[0]!.usage_limits;
        const client = s.storedClient({ 'x-gateway-provider': `@${slug}` });
        await exhaustThenRaise(
          client,
          access,
          async (credit) => {
            expect((await s.admin('PUT', `/integrations/${integration.body.id}/workspaces`, { workspaces: [{ id: 'default', usage_limits: { credit_limit: credit } }] })).status).toBe(200);
          },
          `integration ${integration.body.id} in workspace`,
        );
        const boundary = Date.parse((await access()).next_usage_reset_at!);
        setClock(boundary + 1);
        try {
          await s.gateway.service(UsageLimitServices.resets).tick();
          expect((await access()).last_reset_at).toBe(new Date(boundary).toISOString());
          expect((await s.admin<Json>('GET', `/integrations/${integration.body.id}`)).body.last_reset_at).toBe(new Date(boundary).toISOString());
        } finally {
          limitsClock.now = () => Date.now();
        }
      });

      test('a workspace-user key: its exhausted alert goes to its user and to the admins', async () => {
        const member = await s.admin<{ id: string }>('POST', '/users', { email: 'spender@example.test', workspaces: [{ id: 'default', role: 'member' }] });
        expect(member.status).toBe(201);
        const key = await s.admin<{ id: string; key?: string }>('POST', '/api-keys', {
          name: 'spender key',
          type: 'workspace-user',
          workspace_id: 'default',
          user_id: member.body.id,
          scopes: ['completions.write'],
          usage_limits: { type: 'tokens', credit_limit: 1 },
        });
        expect(key.status).toBe(201);
        // Made by an organisation admin, the secret is in the answer.
        const secret = key.body.key!;
        expect(secret).toBeString();
        const client = s.client(secret);
        expect((await call(client)).status).toBe(200);
        await until(async () => (await s.admin<{ usage_limits: Limits }>('GET', `/api-keys/${key.body.id}`)).body.usage_limits.current_usage, (u) => u > 0);
        const mail = await smtp.waitFor((m) => m.subject === 'Usage limit "spender key" is exhausted');
        expect(mail.to.sort()).toEqual([ADMIN, 'spender@example.test'].sort());
      });
    });
  });
}
