// GET /logs over HTTP on SQLite and MariaDB, with rows the request log wrote for real gateway calls (to the local
// OpenAI mock): what a member's key, an organisation admin's and an owner's see, and how flipping a security
// setting (organisation value or workspace override) changes it; filters, pages, the single log, bad queries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from './settings-support.ts';
import { RequestLogServices } from '@gateway/plugin-request-log';

interface LogList {
  object: string;
  data: Json[];
  total: number;
  log_format: string;
}

const errorOf = (body: Json) => body.error as { message: string; param: string | null };

describe.each(E2E_DIALECTS)('GET /logs and the security settings (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  /** Keys and the logs of their calls, made once for the suite. */
  let people: { member: string; memberKeyId: string; other: string; otherKeyId: string; admin: string; owner: string; otherWorkspace: string };
  const traces: Record<string, string> = {};

  async function chat(key: string, name: string, model: string, metadata?: Record<string, string>): Promise<void> {
    const trace = `settings-logs-${crypto.randomUUID()}`;
    traces[name] = trace;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-gateway-api-key': key,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
      'x-gateway-trace-id': trace,
      authorization: 'Bearer sk-test',
    };
    if (metadata) headers['x-gateway-metadata'] = JSON.stringify(metadata);
    const response = await gw().gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify({ model, messages: [{ role: 'user', content: name }] }) }),
    );
    expect([name, response.status]).toEqual([name, 200]);
    await response.text();
  }

  const logsOf = async (key: string, query = '') => {
    const answer = await gw().call<LogList>('GET', `/logs${query}`, undefined, key);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const traceNames = (list: LogList) =>
    list.data.map((log) => Object.entries(traces).find(([, trace]) => trace === log.trace_id)?.[0] ?? `?${String(log.trace_id)}`).sort();

  test('setup: a member, another member, an organisation admin and an owner make calls; the request log stores them', async () => {
    const { addUser, addKey, addWorkspace, workspaceId, gateway } = gw();
    const otherWorkspace = await addWorkspace('logs-other');
    const member = await addUser('member@logs.test', 'member', { [workspaceId]: 'member' });
    const other = await addUser('other@logs.test', 'member', { [workspaceId]: 'member', [otherWorkspace]: 'member' });
    const admin = await addUser('admin@logs.test', 'admin');
    const owner = await addUser('owner@logs.test', 'owner');
    const scopes = ['completions.write', 'logs.read'];
    const memberKey = await addKey({ type: 'workspace-user', workspaceId, userId: member, scopes });
    const otherKey = await addKey({ type: 'workspace-user', workspaceId, userId: other, scopes });
    const otherElsewhere = await addKey({ type: 'workspace-user', workspaceId: otherWorkspace, userId: other, scopes });
    people = {
      member: memberKey.secret,
      memberKeyId: memberKey.id,
      other: otherKey.secret,
      otherKeyId: otherKey.id,
      admin: (await addKey({ type: 'workspace-user', workspaceId, userId: admin, scopes })).secret,
      owner: (await addKey({ type: 'workspace-user', workspaceId, userId: owner, scopes })).secret,
      otherWorkspace,
    };
    await chat(people.member, 'member-1', 'gpt-4o-mini', { team: 'red' });
    await chat(people.member, 'member-2', 'gpt-4o');
    await chat(people.other, 'other-1', 'gpt-4o-mini', { team: 'blue' });
    await chat(otherElsewhere.secret, 'other-elsewhere', 'gpt-4o-mini');
    await gateway.service(RequestLogServices.queue).flush();
    const all = await logsOf(TEST_ADMIN_KEY);
    expect(traceNames(all)).toEqual(['member-1', 'member-2', 'other-1', 'other-elsewhere']);
  });

  test("flipping membersViewAllData changes what a member's key sees (organisation value, then the workspace override)", async () => {
    const { call, workspaceId } = gw();
    const everything = await logsOf(people.member);
    expect(everything.log_format).toBe('v1');
    expect(everything.data.every((log) => log.log_format === 'v1' && log.object === 'log')).toBe(true);
    expect(traceNames(everything)).toEqual(['member-1', 'member-2', 'other-1']); // their workspace, not the other one
    const othersLog = everything.data.find((log) => log.trace_id === traces['other-1'])!;

    expect((await call('PUT', '/settings/security', { membersViewAllData: false })).status).toBe(200);
    const own = await logsOf(people.member);
    expect(traceNames(own)).toEqual(['member-1', 'member-2']);
    expect(own.total).toBe(2);
    expect((await call('GET', `/logs/${String(othersLog.id)}`, undefined, people.member)).status).toBe(404);

    // The data_visibility override of the workspace lets members see everything there again.
    expect((await call('PUT', `/workspaces/${workspaceId}/settings/security`, { membersViewAllData: true })).status).toBe(200);
    expect(traceNames(await logsOf(people.member))).toEqual(['member-1', 'member-2', 'other-1']);
    expect((await call('GET', `/logs/${String(othersLog.id)}`, undefined, people.member)).status).toBe(200);

    await call('PUT', `/workspaces/${workspaceId}/settings/security`, { membersViewAllData: null });
    expect(traceNames(await logsOf(people.other))).toEqual(['other-1', 'other-elsewhere']); // their own keys, both workspaces
    await call('PUT', '/settings/security', { membersViewAllData: null });
    expect(traceNames(await logsOf(people.other))).toEqual(['member-1', 'member-2', 'other-1', 'other-elsewhere']);
  });

  test('organisation admins: organisationAdminsViewLogs and organisationAdminsViewLogMetadata; owners always see everything', async () => {
    const { call } = gw();
    const before = await logsOf(people.admin);
    expect(traceNames(before)).toEqual(['member-1', 'member-2', 'other-1', 'other-elsewhere']);
    expect(before.data.find((log) => log.trace_id === traces['member-1'])).toMatchObject({ metadata: { team: 'red' }, metadata_hidden: false });

    await call('PUT', '/settings/security', { organisationAdminsViewLogMetadata: false });
    const hidden = await logsOf(people.admin);
    expect(hidden.data.find((log) => log.trace_id === traces['member-1'])).toMatchObject({ metadata: null, metadata_hidden: true });
    expect((await logsOf(people.owner)).data.find((log) => log.trace_id === traces['member-1'])).toMatchObject({ metadata: { team: 'red' } });

    await call('PUT', '/settings/security', { organisationAdminsViewLogs: false });
    expect((await logsOf(people.admin)).total).toBe(0);
    expect((await logsOf(TEST_ADMIN_KEY)).total).toBe(0); // an organisation-service key acts as an admin
    await call('PUT', `/workspaces/${people.otherWorkspace}/settings/security`, { organisationAdminsViewLogs: true });
    expect(traceNames(await logsOf(people.admin))).toEqual(['other-elsewhere']);
    expect(traceNames(await logsOf(people.owner))).toEqual(['member-1', 'member-2', 'other-1', 'other-elsewhere']);

    // Back to the defaults.
    await call('PUT', '/settings/security', { organisationAdminsViewLogs: null, organisationAdminsViewLogMetadata: null });
    await call('PUT', `/workspaces/${people.otherWorkspace}/settings/security`, { organisationAdminsViewLogs: null });
    expect((await logsOf(people.admin)).total).toBe(4);
  });

  test('filters, pages and the single log (bodies included); bad queries are 400s naming the parameter', async () => {
    const { call, workspaceId } = gw();
    expect(traceNames(await logsOf(TEST_ADMIN_KEY, '?model=gpt-4o'))).toEqual(['member-2']);
    expect(traceNames(await logsOf(TEST_ADMIN_KEY, `?api_key_id=${people.memberKeyId}`))).toEqual(['member-1', 'member-2']);
    expect(traceNames(await logsOf(TEST_ADMIN_KEY, '?workspace_id=logs-other'))).toEqual(['other-elsewhere']);
    expect((await logsOf(TEST_ADMIN_KEY, `?workspace_id=${workspaceId}&status=200,201&provider=openai`)).total).toBe(3);
    expect((await logsOf(TEST_ADMIN_KEY, '?status=500')).total).toBe(0);
    expect((await logsOf(TEST_ADMIN_KEY, '?created_after=2000-01-01T00:00:00Z&created_before=2999-01-01')).total).toBe(4);
    expect((await logsOf(TEST_ADMIN_KEY, `?created_after=${Date.now() + 60_000}`)).total).toBe(0);

    const first = await logsOf(TEST_ADMIN_KEY, '?page_size=3');
    const second = await logsOf(TEST_ADMIN_KEY, '?page_size=3&current_page=1');
    expect([first.data.length, second.data.length, first.total, second.total]).toEqual([3, 1, 4, 4]);
    const createdAt = [...first.data, ...second.data].map((log) => String(log.created_at));
    expect(createdAt).toEqual([...createdAt].sort().reverse()); // newest first
    expect(first.data[0]!.request_body).toBeUndefined(); // bodies only in the single log

    const one = await call('GET', `/logs/${String(first.data[0]!.id)}`, undefined, people.owner);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ object: 'log', log_format: 'v1', id: first.data[0]!.id, status: 200, provider: 'openai' });
    expect(String(one.body.request_body)).toContain('"messages"');
    expect(String(one.body.response_body)).toContain('chat.completion');
    expect((await call('GET', '/logs/no-such-log')).status).toBe(404);

    for (const [query, param] of [
      ['?status=abc', 'status'],
      ['?status=99', 'status'],
      ['?created_after=yesterday', 'created_after'],
      ['?created_before=2024-13-45', 'created_before'],
      ['?page_size=101', 'page_size'],
      ['?current_page=-1', 'current_page'],
    ] as const) {
      const answer = await call('GET', `/logs${query}`);
      expect([query, answer.status, errorOf(answer.body).param]).toEqual([query, 400, param]);
    }
    expect((await call('GET', '/logs?workspace_id=no-such-workspace')).status).toBe(404);
    const noScope = (await gw().addKey({ type: 'organisation-service', workspaceId: null, scopes: ['settings.read'] })).secret;
    expect((await call('GET', '/logs', undefined, noScope)).status).toBe(403);
  });
});
