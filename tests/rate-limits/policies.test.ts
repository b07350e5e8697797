// Rate-limit policies end to end, through the official openai SDK against an in-process gateway (SQLite, memory
// counters) with the openai mock behind it: the /policies/rate-limits routes and their shapes, requests and tokens
// policies per unit across windows (the limits' clock moved by the test), conditions by workspace, endpoint type and
// metadata, group_by api_key, archiving, the 429 (body, headers, no provider call, logged) and POLICY_ENABLED=OFF.
// Each test isolates its policies with a metadata condition of its own (`metadata.case`).

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { windowOf } from '@gateway/policy-kit';
import { APIError } from 'openai';
import { type Json, type Stack, setClock, startStack } from './support.ts';

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  await s.close();
});

type Policy = Json & { id: string };
const chat = (content = 'hello') => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });
const meta = (c: string, extra: Record<string, string> = {}) => ({ 'x-gateway-metadata': JSON.stringify({ case: c, ...extra }) });

async function policy(body: Json): Promise<Policy> {
  const r = await s.admin<Policy>('POST', '/policies/rate-limits', body);
  expect(r.status).toBe(201);
  return r.body;
}

/** The status of one chat call (200, or the APIError's), with the error when there is one. */
async function call(client = s.client(), content = 'hello'): Promise<{ status: number; error?: APIError }> {
  try {
    await client.chat.completions.create(chat(content));
    return { status: 200 };
  } catch (error) {
    if (error instanceof APIError) return { status: error.status ?? 0, error };
    throw error;
  }
}

async function statuses(n: number, client = s.client()): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(client)).status);
  return out;
}

describe('the /policies/rate-limits routes', () => {
  test('create, read, list with filters, update, archive: the SPEC shapes', async () => {
    const created = await policy({
      name: 'shape',
      type: 'requests',
      unit: 'rpm',
      value: 100,
      conditions: [{ key: 'metadata.case', value: 'shape' }],
      group_by: [{ key: 'api_key' }],
      workspace_id: 'default',
    });
    expect(Object.keys(created).sort()).toEqual(
      ['conditions', 'created_at', 'group_by', 'id', 'last_updated_at', 'name', 'object', 'organisation_id', 'status', 'type', 'unit', 'value', 'workspace_id'].sort(),
    );
    expect(created).toMatchObject({ object: 'policy_rate_limits', name: 'shape', type: 'requests', unit: 'rpm', value: 100, status: 'active', group_by: [{ key: 'api_key' }] });
    expect(created.workspace_id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await s.admin<{ object: string; data: Json[]; total: number }>('GET', '/policies/rate-limits?workspace_id=default&type=requests&unit=rpm&status=active');
    expect(listed.body.object).toBe('list');
    const item = listed.body.data.find((p) => p.id === created.id)!;
    expect(item).toBeDefined();
    expect('object' in item).toBe(false); // list items omit `object`
    expect((await s.admin<{ data: Json[] }>('GET', '/policies/rate-limits?unit=rph')).body.data.some((p) => p.id === created.id)).toBe(false);
    expect((await s.admin<{ data: Json[]; total: number }>('GET', '/policies/rate-limits?page_size=1&current_page=0')).body.data).toHaveLength(1);
    expect((await s.admin('GET', '/policies/rate-limits?unit=rps')).status).toBe(400);

    const updated = await s.admin<Policy>('PUT', `/policies/rate-limits/${created.id}`, { name: 'renamed', value: 5, group_by: [] });
    expect(updated.body).toMatchObject({ name: 'renamed', value: 5, group_by: [], unit: 'rpm' });
    expect((await s.admin('PUT', `/policies/rate-limits/${created.id}`, { unit: 'rph' })).status).toBe(400); // unit is fixed

    expect((await s.admin('DELETE', `/policies/rate-limits/${created.id}`)).status).toBe(204);
    expect((await s.admin<Policy>('GET', `/policies/rate-limits/${created.id}`)).body.status).toBe('archived');
    expect((await s.admin('GET', `/policies/rate-limits/${created.id}?status=active`)).status).toBe(404);
    expect((await s.admin('GET', `/policies/rate-limits/${created.id}?status=archived`)).status).toBe(200);
  });

  test('validation names the field; unknown condition and group_by keys are refused', async () => {
    const bad = await s.admin<{ error: { message: string } }>('POST', '/policies/rate-limits', {
      name: 'bad',
      type: 'requests',
      unit: 'rpm',
      value: 1,
      conditions: [{ key: 'colour', value: 'red' }],
      group_by: [{ key: 'model' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('body.conditions[0].key');
    expect(bad.body.error.message).toContain('body.group_by[0].key');
    expect((await s.admin('POST', '/policies/rate-limits', { name: 'x', type: 'requests', unit: 'rpm', value: 0 })).status).toBe(400);
    expect((await s.admin('POST', '/policies/rate-limits', { name: 'x', type: 'cost', unit: 'rpm', value: 1 })).status).toBe(400);
    expect((await s.admin('POST', '/policies/rate-limits', { name: 'x', type: 'requests', unit: 'rpm', value: 1, workspace_id: 'nope' })).status).toBe(404);
  });

  test('a workspace-service key (not an organisation admin) may not manage policies', async () => {
    const { key } = await s.newKey('default');
    const scoped = await s.admin<{ id: string; key: string }>('POST', '/api-keys', {
      name: 'ws-admin-ish',
      type: 'workspace-service',
      workspace_id: 'default',
      scopes: ['rate_limits_policies.read', 'rate_limits_policies.write'],
    });
    expect(scoped.status).toBe(201);
    expect((await s.admin('GET', '/policies/rate-limits', undefined, scoped.body.key)).status).toBe(403);
    expect((await s.admin('GET', '/policies/rate-limits', undefined, key)).status).toBe(403); // no scope either
  });
});

describe('enforcement', () => {
  test('requests per unit: value calls per window, the next refused, a new window admits again', async () => {
    const base = Date.parse('2031-01-15T10:20:30.000Z'); // a Wednesday
    for (const unit of ['rpm', 'rph', 'rpd', 'rpw'] as const) {
      setClock(base);
      await policy({ name: unit, type: 'requests', unit, value: 2, conditions: [{ key: 'metadata.case', value: `unit-${unit}` }] });
      const client = s.client(undefined, meta(`unit-${unit}`));
      expect(await statuses(3, client)).toEqual([200, 200, 429]);
      // Still the same window just before its end; the next one starts fresh.
      const { end } = windowOf(unit, base);
      setClock(end - 1);
      expect(await statuses(1, client)).toEqual([429]);
      setClock(end);
      expect(await statuses(3, client)).toEqual([200, 200, 429]);
    }
    setClock(Date.now());
  });

  test('the 429: INTERFACE shape, the policy in the message, OpenAI headers, no provider call, logged', async () => {
    const base = Date.parse('2031-02-03T08:00:10.000Z');
    setClock(base);
    const p = await policy({ name: 'shape-429', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'metadata.case', value: '429' }] });
    const trace = `rl-429-${crypto.randomUUID()}`;
    const client = s.client(undefined, { ...meta('429'), 'x-gateway-trace-id': trace });
    expect((await call(client)).status).toBe(200);
    const before = s.mock.requests.length;
    const refused = await call(client);
    expect(s.mock.requests.length).toBe(before); // the provider was not called
    const err = refused.error!;
    expect(err.status).toBe(429);
    expect(err.error).toEqual({ message: expect.stringContaining(`policy ${p.id}`), type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null });
    expect(err.headers?.get('retry-after')).toBe('50');
    expect(err.headers?.get('x-ratelimit-limit-requests')).toBe('1');
    expect(err.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(err.headers?.get('x-ratelimit-reset-requests')).toBe('50s');
    const rows = await s.logs((r) => r.trace_id === trace);
    expect(rows.map((r) => r.status).sort()).toEqual([200, 429]);
    setClock(Date.now());
  });

  test('tokens: admitted while consumed tokens are below the value; the real totals are added, streams included', async () => {
    setClock(Date.parse('2031-03-01T00:00:00.000Z'));
    await policy({ name: 'tokens', type: 'tokens', unit: 'rph', value: 40, conditions: [{ key: 'metadata.case', value: 'tokens' }] });
    const client = s.client(undefined, meta('tokens'));
    let consumed = 0;
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        if (i % 2) {
          const stream = await client.chat.completions.create({ ...chat('one two three four five'), stream: true, stream_options: { include_usage: true } });
          for await (const chunk of stream) if (chunk.usage) consumed += chunk.usage.total_tokens;
        } else {
          const answer = await client.chat.completions.create(chat('one two three four five'));
          consumed += answer.usage!.total_tokens;
        }
        seen.push(200);
      } catch (error) {
        expect((error as APIError).status).toBe(429);
        seen.push(429);
        break;
      }
      await Bun.sleep(20); // the tokens are added once the answer is complete (after the client has it)
    }
    expect(seen.at(-1)).toBe(429);
    // Every admitted call started below the value, and the refusal came once the real totals reached it.
    expect(consumed).toBeGreaterThanOrEqual(40);
    const perCall = consumed / (seen.length - 1);
    expect(consumed - perCall).toBeLessThan(40);
    setClock(Date.now());
  });

  test('conditions: by workspace, by endpoint type, by metadata', async () => {
    setClock(Date.parse('2031-04-01T00:00:00.000Z'));
    const ws = await s.admin<{ id: string }>('POST', '/workspaces', { name: `rl-${crypto.randomUUID().slice(0, 6)}` });
    expect(ws.status).toBe(201);
    const other = await s.newKey(ws.body.id);
    const mine = await s.newKey('default');
    // workspace: only calls from the other workspace are limited
    await policy({ name: 'ws', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'workspace_id', value: ws.body.id }, { key: 'metadata.case', value: 'ws' }] });
    expect(await statuses(2, s.client(other.key, meta('ws')))).toEqual([200, 429]);
    expect(await statuses(2, s.client(mine.key, meta('ws')))).toEqual([200, 200]);
    // endpoint type: embeddings are limited, chat is not
    await policy({ name: 'embed', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'endpoint_type', value: 'embed' }, { key: 'metadata.case', value: 'ep' }] });
    const ep = s.client(mine.key, meta('ep'));
    const embed = () => ep.embeddings.create({ model: 'text-embedding-3-small', input: 'a' }).then(() => 200, (e: APIError) => e.status);
    expect([await embed(), await embed()]).toEqual([200, 429]);
    expect(await statuses(2, ep)).toEqual([200, 200]);
    // metadata: only the matching value
    await policy({ name: 'meta', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'metadata.case', value: 'meta' }, { key: 'metadata.team', value: 'red' }] });
    expect(await statuses(2, s.client(mine.key, meta('meta', { team: 'red' })))).toEqual([200, 429]);
    expect(await statuses(2, s.client(mine.key, meta('meta', { team: 'blue' })))).toEqual([200, 200]);
    setClock(Date.now());
  });

  test('group_by api_key: two keys get separate budgets; without group_by they share one', async () => {
    setClock(Date.parse('2031-05-01T00:00:00.000Z'));
    const [a, b] = [await s.newKey('default'), await s.newKey('default')];
    await policy({ name: 'per-key', type: 'requests', unit: 'rpm', value: 2, conditions: [{ key: 'metadata.case', value: 'per-key' }], group_by: [{ key: 'api_key' }] });
    expect(await statuses(3, s.client(a.key, meta('per-key')))).toEqual([200, 200, 429]);
    expect(await statuses(3, s.client(b.key, meta('per-key')))).toEqual([200, 200, 429]);
    await policy({ name: 'shared', type: 'requests', unit: 'rpm', value: 2, conditions: [{ key: 'metadata.case', value: 'shared' }] });
    expect(await statuses(2, s.client(a.key, meta('shared')))).toEqual([200, 200]);
    expect(await statuses(1, s.client(b.key, meta('shared')))).toEqual([429]);
    setClock(Date.now());
  });

  test('an archived policy stops applying at once; a raised value applies at once', async () => {
    setClock(Date.parse('2031-06-01T00:00:00.000Z'));
    const p = await policy({ name: 'archive', type: 'requests', unit: 'rpd', value: 1, conditions: [{ key: 'metadata.case', value: 'archive' }] });
    const client = s.client(undefined, meta('archive'));
    expect(await statuses(2, client)).toEqual([200, 429]);
    expect((await s.admin('PUT', `/policies/rate-limits/${p.id}`, { value: 2 })).status).toBe(200);
    expect(await statuses(2, client)).toEqual([200, 429]);
    expect((await s.admin('DELETE', `/policies/rate-limits/${p.id}`)).status).toBe(204);
    expect(await statuses(3, client)).toEqual([200, 200, 200]);
    setClock(Date.now());
  });
});

describe('POLICY_ENABLED=OFF', () => {
  test('the routes answer 403 feature_disabled (the enforcement stage is not registered either)', async () => {
    const off = await startStack({ POLICY_ENABLED: 'OFF' });
    try {
      const r = await off.admin<{ error: { code: string } }>('POST', '/policies/rate-limits', { name: 'x', type: 'requests', unit: 'rpm', value: 1 });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('feature_disabled');
      expect((await off.admin('GET', '/policies/rate-limits')).status).toBe(403);
    } finally {
      await off.close();
    }
  });
});
