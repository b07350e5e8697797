// The rate_limits of an API key, a virtual key and an integration's workspace access, end to end through the openai
// SDK against an in-process gateway (SQLite, memory counters) with the openai mock behind it: set on the object
// (POST and PUT, and POST /integrations' workspaces), shown on its answers, enforced as policies are (429
// rate_limit_exceeded naming the object, with the x-ratelimit-* headers, no provider call) while other objects keep
// their own budgets, refused when malformed, and removed with null.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { type Json, type Stack, setClock, startStack } from './support.ts';

let s: Stack;
beforeAll(async () => {
  s = await startStack();
  // Every call of this file in one minute window: the limits' clock is still, a second into a minute.
  setClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);
});
afterAll(() => s.close());

type Limit = { type: string; unit: string; value: number };
const TWO_RPM = [{ type: 'requests', unit: 'rpm', value: 2 }];

async function call(client: OpenAI): Promise<{ status: number; error?: APIError }> {
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
    return { status: 200 };
  } catch (error) {
    if (error instanceof APIError) return { status: error.status ?? 0, error };
    throw error;
  }
}

/** Two calls pass, the third is refused by the object's limit (named in the message), without reaching the provider. */
async function twoThenRefused(client: OpenAI, names: string): Promise<void> {
  expect((await call(client)).status).toBe(200);
  expect((await call(client)).status).toBe(200);
  const before = s.mock.requests.length;
  const refused = await call(client);
  expect(refused.status).toBe(429);
  expect(s.mock.requests.length).toBe(before);
  const error = refused.error!.error as Json;
  expect(error.type).toBe('rate_limit_exceeded');
  expect(String(error.message)).toContain(names);
  expect(refused.error!.headers?.get('x-ratelimit-limit-requests')).toBe('2');
  expect(refused.error!.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
  expect(Number(refused.error!.headers?.get('retry-after'))).toBeGreaterThan(0);
}

describe('rate_limits on objects', () => {
  test('an API key with 2 rpm: 2×200 then 429 naming the key; another key unaffected; shown; removed with null', async () => {
    const created = await s.admin<Json & { id: string; key: string; rate_limits: Limit[] }>('POST', '/api-keys', {
      name: 'two a minute',
      type: 'organisation-service',
      scopes: ['completions.write'],
      rate_limits: TWO_RPM,
    });
    expect(created.status).toBe(201);
    expect(created.body.rate_limits).toEqual(TWO_RPM);
    expect((await s.admin<{ rate_limits: Limit[] }>('GET', `/api-keys/${created.body.id}`)).body.rate_limits).toEqual(TWO_RPM);
    const other = await s.newKey();
    expect((await s.admin<{ rate_limits: Limit[] | null }>('GET', `/api-keys/${other.id}`)).body.rate_limits).toBeNull();

    await twoThenRefused(s.client(created.body.key), `api_key ${created.body.id}`);
    // Another key keeps its own budget (none here): three calls pass.
    for (let i = 0; i < 3; i++) expect((await call(s.client(other.key))).status).toBe(200);

    const listed = await s.admin<{ data: (Json & { rate_limits: Limit[] | null })[] }>('GET', '/api-keys?page_size=1000');
    expect(listed.body.data.find((k) => k.id === created.body.id)?.rate_limits).toEqual(TWO_RPM);

    // Removed: the key's calls pass again in the same window.
    expect((await s.admin<{ rate_limits: unknown }>('PUT', `/api-keys/${created.body.id}`, { rate_limits: null })).body.rate_limits).toBeNull();
    expect((await call(s.client(created.body.key))).status).toBe(200);
  });

  test('malformed rate_limits are refused with every violation, and nothing is written', async () => {
    const bad = await s.admin<{ error: Json }>('POST', '/api-keys', {
      name: 'bad limits',
      type: 'organisation-service',
      scopes: ['completions.write'],
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 0 }, { type: 'bytes', unit: 'rps', value: 1 }, { type: 'tokens', unit: 'rpd', value: 5, extra: 1 }],
    });
    expect(bad.status).toBe(400);
    const message = String(bad.body.error.message);
    for (const part of ['rate_limits[0].value', 'rate_limits[1].type', 'rate_limits[1].unit', 'rate_limits[2].extra']) expect(message).toContain(part);
    const twice = await s.admin<{ error: Json }>('POST', '/api-keys', {
      name: 'twice',
      type: 'organisation-service',
      scopes: ['completions.write'],
      rate_limits: [...TWO_RPM, { type: 'requests', unit: 'rpm', value: 5 }],
    });
    expect(twice.status).toBe(400);
    expect(String(twice.body.error.message)).toContain('rate_limits[1]: a second requests limit per rpm');
    const keys = await s.admin<{ data: Json[] }>('GET', '/api-keys?page_size=1000');
    expect(keys.body.data.filter((k) => k.name === 'bad limits' || k.name === 'twice')).toEqual([]);
  });

  test('a virtual key: set on PUT, shown, enforced by slug', async () => {
    const vk = await s.admin<Json & { id: string; slug: string; rate_limits: Limit[] | null }>('POST', '/virtual-keys', {
      name: 'rate-limited vk',
      provider: 'openai',
      key: 'sk-rate-limited-virtual-key-01',
      configurations: { custom_host: s.mock.url },
    });
    expect(vk.status).toBe(201);
    expect(vk.body.rate_limits).toBeNull();
    const put = await s.admin<{ rate_limits: Limit[] }>('PUT', `/virtual-keys/${vk.body.id}`, { rate_limits: TWO_RPM });
    expect(put.status).toBe(200);
    expect(put.body.rate_limits).toEqual(TWO_RPM);
    expect((await s.admin<{ rate_limits: Limit[] }>('GET', `/virtual-keys/${vk.body.id}`)).body.rate_limits).toEqual(TWO_RPM);
    await twoThenRefused(s.storedClient({ 'x-gateway-virtual-key': vk.body.slug }), `virtual_key ${vk.body.id}`);
    // The same caller through the provider header is not limited by the virtual key's budget.
    expect((await call(s.client())).status).toBe(200);
  });

  test('an integration workspace: rate_limits and usage_limits given in POST /integrations workspaces[], shown, enforced through @slug', async () => {
    const slug = `rl-${crypto.randomUUID().slice(0, 8)}`;
    const integration = await s.admin<Json & { id: string; workspaces: (Json & { rate_limits: Limit[]; usage_limits: Json })[] }>('POST', '/integrations', {
      name: 'Rate limited',
      slug,
      ai_provider_id: 'openai',
      key: 'sk-rate-limited-integration-01',
      configurations: { custom_host: s.mock.url },
      workspaces: [{ id: 'default', rate_limits: TWO_RPM, usage_limits: { type: 'tokens', credit_limit: 1_000_000 } }],
    });
    expect(integration.status).toBe(201);
    expect(integration.body.workspaces[0]).toMatchObject({ rate_limits: TWO_RPM, usage_limits: { type: 'tokens', credit_limit: 1_000_000, current_usage: 0 } });
    const access = await s.admin<{ data: (Json & { rate_limits: Limit[]; usage_limits: Json })[] }>('GET', `/integrations/${integration.body.id}/workspaces`);
    expect(access.body.data[0]).toMatchObject({ rate_limits: TWO_RPM, usage_limits: { type: 'tokens', credit_limit: 1_000_000 } });
    await twoThenRefused(s.storedClient({ 'x-gateway-provider': `@${slug}` }), `integration ${integration.body.id} in workspace`);

    // PUT /integrations/:id/workspaces replaces the limits like the other fields; a malformed entry names its place.
    const bad = await s.admin<{ error: Json }>('PUT', `/integrations/${integration.body.id}/workspaces`, { workspaces: [{ id: 'default', rate_limits: [{ type: 'requests' }] }] });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error.message)).toContain('workspaces[0].rate_limits[0].unit');
    const raised = await s.admin<{ data: (Json & { rate_limits: Limit[] })[] }>('PUT', `/integrations/${integration.body.id}/workspaces`, {
      workspaces: [{ id: 'default', rate_limits: [{ type: 'requests', unit: 'rpm', value: 3 }] }],
    });
    expect(raised.body.data[0]?.rate_limits).toEqual([{ type: 'requests', unit: 'rpm', value: 3 }]);
    expect((await call(s.storedClient({ 'x-gateway-provider': `@${slug}` }))).status).toBe(200);
  });

  test('a malformed usage_limits in POST /integrations workspaces[] is refused before the integration is written', async () => {
    const slug = `ul-${crypto.randomUUID().slice(0, 8)}`;
    const bad = await s.admin<{ error: Json }>('POST', '/integrations', {
      name: 'Refused',
      slug,
      ai_provider_id: 'openai',
      key: 'sk-refused-integration-000001',
      workspaces: [{ id: 'default', usage_limits: { credit_limit: -1 } }],
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error.message)).toContain('workspaces[0].usage_limits.credit_limit');
    const all = await s.admin<{ data: Json[] }>('GET', '/integrations?page_size=100');
    expect(all.body.data.some((i) => i.slug === slug)).toBe(false);
  });
});
