// /logs/saved-filters on SQLite and MariaDB: CRUD with workspaces named by slug (stored by id, so a renamed workspace
// keeps its filters), filter values checked as GET /logs checks them (400 naming filters.<param>), who sees and
// changes which filter, and a saved filter applied by id to GET /logs over rows written by real gateway calls to the
// local OpenAI mock: the same rows as its values given directly, a parameter of the request winning over the saved one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';

const errorOf = (body: Json) => body.error as { param: string | null; message: string };

describe.each(E2E_DIALECTS)('saved log filters (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  let memberA: string;
  let memberB: string;
  let workspaceB: string;
  const traces: { trace: string; model: string; team: string }[] = [];

  test('setup: a member of the default workspace and one of another; calls with two models and two teams', async () => {
    const { addUser, addKey, addWorkspace, workspaceId } = gw();
    workspaceB = await addWorkspace('filters-b');
    const a = await addUser('a@saved-filters.test', 'member', { [workspaceId]: 'member' });
    const b = await addUser('b@saved-filters.test', 'member', { [workspaceB]: 'member' });
    const scopes = ['completions.write', 'logs.read', 'logs.write'];
    memberA = (await addKey({ type: 'workspace-user', workspaceId, userId: a, scopes })).secret;
    memberB = (await addKey({ type: 'workspace-user', workspaceId: workspaceB, userId: b, scopes })).secret;
    for (const [model, team] of [['gpt-4o-mini', 'red'], ['gpt-4o', 'red'], ['gpt-4o-mini', 'blue'], ['gpt-4o', 'blue'], ['gpt-4o-mini', 'red']] as const) {
      const trace = `saved-filters-${crypto.randomUUID()}`;
      traces.push({ trace, model, team });
      const res = await gw().gateway.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-gateway-api-key': memberA,
            'x-gateway-provider': 'openai',
            'x-gateway-custom-host': mock.url,
            'x-gateway-trace-id': trace,
            'x-gateway-metadata': JSON.stringify({ team }),
            authorization: 'Bearer sk-test',
          },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
        }),
      );
      expect(res.status).toBe(200);
      await res.text();
    }
    await gw().gateway.service(RequestLogServices.queue).flush();
  });

  test('create with the workspace by slug, read, list, update, delete', async () => {
    const { call, workspaceId } = gw();
    const created = await call<Json>('POST', '/logs/saved-filters', {
      name: 'Red team, small model',
      workspace_id: 'default',
      filters: { metadata: { team: 'red' }, model: 'gpt-4o-mini', workspace_id: 'default', status: '200' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'log_saved_filter',
      name: 'Red team, small model',
      workspace_id: workspaceId,
      filters: { metadata: '{"team":"red"}', model: 'gpt-4o-mini', workspace_id: workspaceId, status: '200' },
    });
    const id = String(created.body.id);
    expect((await call<Json>('GET', `/logs/saved-filters/${id}`)).body).toEqual(created.body);
    const listed = await call<{ data: Json[]; total: number }>('GET', '/logs/saved-filters?workspace_id=default');
    expect(listed.body.data.map((f) => f.id)).toContain(id);

    const updated = await call<Json>('PUT', `/logs/saved-filters/${id}`, { name: 'Red team', filters: { metadata: '{"team":"red"}' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Red team', filters: { metadata: '{"team":"red"}' } });
    expect(Object.keys(updated.body.filters as Json)).toEqual(['metadata']);
    expect((await call<Json>('GET', `/logs/saved-filters/${id}`)).body).toMatchObject({ name: 'Red team' });

    expect((await call('DELETE', `/logs/saved-filters/${id}`)).status).toBe(204);
    expect((await call('GET', `/logs/saved-filters/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/logs/saved-filters/${id}`)).status).toBe(404);
  });

  test('filter values are checked as GET /logs checks them; unknown workspaces are 404s', async () => {
    const { call } = gw();
    for (const [filters, param] of [
      [{ status: 'abc' }, 'filters.status'],
      [{ bogus: '1' }, 'filters.bogus'],
      [{ metadata: '[1]' }, 'filters.metadata'],
      [{ time_of_generation_min: 'yesterday' }, 'filters.time_of_generation_min'],
      [{ cost_min: '-1' }, 'filters.cost_min'],
    ] as const) {
      const answer = await call<Json>('POST', '/logs/saved-filters', { name: 'bad', workspace_id: 'default', filters });
      expect([param, answer.status, errorOf(answer.body).param]).toEqual([param, 400, param]);
    }
    expect((await call('POST', '/logs/saved-filters', { name: 'x', workspace_id: 'no-such-ws', filters: {} })).status).toBe(404);
    expect((await call('POST', '/logs/saved-filters', { name: 'x', workspace_id: 'default', filters: { workspace_id: 'no-such-ws' } })).status).toBe(404);
    expect((await call('POST', '/logs/saved-filters', { name: 'x', filters: {}, extra: 1 })).status).toBe(400);
    const before = await call<{ total: number }>('GET', '/logs/saved-filters');
    expect(before.body.total).toBe(0);
  });

  test('who sees and changes which filter', async () => {
    const { call } = gw();
    const ofA = String((await call<Json>('POST', '/logs/saved-filters', { name: 'A’s', workspace_id: 'default', filters: { model: 'gpt-4o' } }, memberA)).body.id);
    const ofOrg = String((await call<Json>('POST', '/logs/saved-filters', { name: 'Everyone’s', filters: { status: '200' } })).body.id);
    // A member may not save an organisation-wide filter, nor one in a workspace they have no role in.
    expect((await call('POST', '/logs/saved-filters', { name: 'x', filters: {} }, memberA)).status).toBe(403);
    expect((await call('POST', '/logs/saved-filters', { name: 'x', workspace_id: 'default', filters: {} }, memberB)).status).toBe(404);
    // B's member sees the organisation's filter, not A's.
    const seenByB = await call<{ data: Json[] }>('GET', '/logs/saved-filters', undefined, memberB);
    expect(seenByB.body.data.map((f) => f.id)).toEqual([ofOrg]);
    expect((await call('GET', `/logs/saved-filters/${ofA}`, undefined, memberB)).status).toBe(404);
    expect((await call('PUT', `/logs/saved-filters/${ofA}`, { name: 'mine' }, memberB)).status).toBe(404);
    expect((await call('DELETE', `/logs/saved-filters/${ofA}`, undefined, memberB)).status).toBe(404);
    expect((await call(`GET`, `/logs?saved_filter_id=${ofA}`, undefined, memberB)).status).toBe(404);
    // The organisation's filter: read by members, changed only by organisation admins.
    expect((await call('GET', `/logs/saved-filters/${ofOrg}`, undefined, memberA)).status).toBe(200);
    expect((await call('PUT', `/logs/saved-filters/${ofOrg}`, { name: 'mine' }, memberA)).status).toBe(403);
    expect((await call('DELETE', `/logs/saved-filters/${ofOrg}`, undefined, memberA)).status).toBe(403);
    expect((await call('PUT', `/logs/saved-filters/${ofA}`, { name: 'A’s, renamed' }, memberA)).status).toBe(200);
    for (const id of [ofA, ofOrg]) expect((await call('DELETE', `/logs/saved-filters/${id}`, undefined, TEST_ADMIN_KEY)).status).toBe(204);
  });

  test('applied by id to GET /logs: the same rows as its values given directly; the request’s own parameters win', async () => {
    const { call } = gw();
    const saved = await call<Json>('POST', '/logs/saved-filters', { name: 'red', workspace_id: 'default', filters: { metadata: { team: 'red' }, model: 'gpt-4o-mini' } });
    const id = String(saved.body.id);
    const ours = (rows: Json[]) => rows.map((r) => String(r.trace_id)).filter((t) => traces.some((x) => x.trace === t)).sort();
    const expected = traces.filter((t) => t.team === 'red' && t.model === 'gpt-4o-mini').map((t) => t.trace).sort();
    expect(expected.length).toBe(2);
    const applied = await call<{ data: Json[] }>('GET', `/logs?saved_filter_id=${id}&limit=1`);
    const direct = await call<{ data: Json[] }>('GET', `/logs?metadata=${encodeURIComponent('{"team":"red"}')}&model=gpt-4o-mini&limit=100`);
    expect(ours(direct.body.data)).toEqual(expected);
    // Cursor pages under the saved filter.
    const second = await call<{ data: Json[] }>('GET', `/logs?saved_filter_id=${id}&limit=1&cursor=${String((applied.body as Json).next_cursor)}`);
    expect(ours([...applied.body.data, ...second.body.data])).toEqual(expected);
    // model given in the request replaces the saved one.
    const overridden = await call<{ data: Json[] }>('GET', `/logs?saved_filter_id=${id}&model=gpt-4o&page_size=100`);
    expect(ours(overridden.body.data)).toEqual(traces.filter((t) => t.team === 'red' && t.model === 'gpt-4o').map((t) => t.trace).sort());
    expect((await call('GET', '/logs?saved_filter_id=no-such-filter')).status).toBe(404);
  });
});
