// Who and what a call was, recorded by the request log and read by analytics, on SQLite and MariaDB over real gateway
// calls to the local OpenAI mock: the key's user (analytics' `users` counts distinct users, not keys), the saved
// config (by slug, by id, and by id with a header setting merged in), a stored provider named `@slug` (`provider`
// groups by it; `ai_service` by the provider type), and a prompt (a call through gatewayCalls with `prompt`, as the
// prompts plugin makes). Groups `config`, `prompt`, `provider`, `ai_service`; the filters config_id (id or slug),
// prompt_id, prompt_version, provider (type or slug), ai_service, user_id; the summary's and a graph's users; and
// the indexes that serve the new filters.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { requestLogs, RequestLogServices } from '@gateway/plugin-request-log';
import { type Caller, type Row as SdkRow, Services } from '@gateway/sdk';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

type Row = SdkRow<typeof requestLogs>;
const BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

describe.each(E2E_DIALECTS)('analytics: users, configs, providers and prompts (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect, { GATEWAY_ENCRYPTION_KEY: 'analytics-attribution-test-key' });
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  const suffix = crypto.randomUUID().slice(0, 8);
  const configSlug = `cfg-${suffix}`;
  const providerSlug = `team-openai-${suffix}`;
  let configId: string;
  let userA: string;
  let userB: string;
  let rows: Row[] = [];
  /** trace id → what the call was meant to record. */
  const calls = new Map<string, { user: string | null; config: string | null; slug: string | null; prompt: [string, number] | null }>();

  const get = (path: string, key = TEST_ADMIN_KEY) => gw().call<Json>('GET', path, undefined, key);

  async function chat(key: string, headers: Record<string, string>, want: { user: string | null; config?: boolean; slug?: boolean }) {
    const trace = `attribution-${crypto.randomUUID()}`;
    calls.set(trace, { user: want.user, config: want.config ? configId : null, slug: want.slug ? providerSlug : null, prompt: null });
    const response = await gw().gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-trace-id': trace, ...headers },
        body: JSON.stringify(BODY),
      }),
    );
    expect([trace, response.status]).toEqual([trace, 200]);
    await response.text();
  }

  const inline = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': '', authorization: 'Bearer sk-test' };

  test('setup: calls by two users and a service key, through a saved config, a stored provider and a prompt', async () => {
    const { addUser, addKey, call, workspaceId, gateway, database } = gw();
    inline['x-gateway-custom-host'] = mock.url;
    const scopes = ['completions.write', 'analytics.read', 'logs.read'];
    userA = await addUser(`a-${suffix}@attribution.test`, 'member', { [workspaceId]: 'member' });
    userB = await addUser(`b-${suffix}@attribution.test`, 'member', { [workspaceId]: 'member' });
    const a1 = await addKey({ type: 'workspace-user', workspaceId, userId: userA, scopes });
    const a2 = await addKey({ type: 'workspace-user', workspaceId, userId: userA, scopes });
    const b = await addKey({ type: 'workspace-user', workspaceId, userId: userB, scopes });
    const service = await addKey({ type: 'workspace-service', workspaceId, scopes });

    const config = await call<{ id: string; slug: string }>('POST', '/configs', {
      name: 'Analytics config',
      slug: configSlug,
      config: { provider: 'openai', api_key: 'sk-saved-config', custom_host: mock.url },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
    const integration = await call('POST', '/integrations', {
      name: 'Team OpenAI',
      slug: providerSlug,
      ai_provider_id: 'openai',
      key: 'sk-integration-0001',
      configurations: { custom_host: mock.url },
      workspaces: [{ id: workspaceId, enabled: true }],
    });
    expect(integration.status).toBe(201);

    await chat(a1.secret, inline, { user: userA });
    await chat(a2.secret, { 'x-gateway-config': configSlug }, { user: userA, config: true });
    await chat(b.secret, { 'x-gateway-config': configId }, { user: userB, config: true });
    // A header setting merged into the saved config (a copy of it) still records the saved config.
    await chat(b.secret, { 'x-gateway-config': configId, 'x-gateway-request-timeout': '30000' }, { user: userB, config: true });
    await chat(b.secret, { 'x-gateway-provider': `@${providerSlug}` }, { user: userB, slug: true });
    await chat(service.secret, inline, { user: null });
    await chat(service.secret, { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-inline', custom_host: mock.url }) }, { user: null });

    // Calls from a prompt, as the prompts plugin makes them: through gatewayCalls with `prompt`.
    const calls2 = gateway.service(Services.gatewayCalls);
    const caller: Caller = { apiKeyId: a1.id, organisationId: gw().organisationId, workspaceId, scopes, keyType: 'workspace-user', userId: userA };
    for (const version of [1, 2]) {
      const traceId = `attribution-prompt-${crypto.randomUUID()}`;
      calls.set(traceId, { user: userA, config: null, slug: null, prompt: [`prompt-${suffix}`, version] });
      const config = calls2.resolveConfig(JSON.stringify({ provider: 'openai', api_key: 'sk-prompt', custom_host: mock.url }), caller);
      const answer = await calls2.call({ endpoint: 'chatComplete', body: BODY, config, caller, traceId, prompt: { id: `prompt-${suffix}`, version } });
      expect(answer.status).toBe(200);
      await answer.text();
    }

    await gateway.service(RequestLogServices.queue).flush();
    rows = await database.select(requestLogs, { fresh: true });
    expect(rows.length).toBe(calls.size);
    for (const row of rows) {
      const want = calls.get(row.trace_id)!;
      expect([row.trace_id, row.user_id, row.config_id, row.provider, row.provider_slug, row.prompt_id, row.prompt_version]).toEqual([
        row.trace_id,
        want.user,
        want.config,
        'openai',
        want.slug,
        want.prompt?.[0] ?? null,
        want.prompt?.[1] ?? null,
      ]);
    }
  });

  const groups = async (groupBy: string) => {
    const answer = await get(`/analytics/groups/${groupBy}?page_size=50`);
    expect([groupBy, answer.status]).toEqual([groupBy, 200]);
    return (answer.body.data as Json[]).map((g) => [g.key, g.requests]);
  };

  test('groups: config (the saved config id), prompt (the prompt id), provider (slug, else type), ai_service (type)', async () => {
    expect(await groups('config')).toEqual([[null, 6], [configId, 3]]);
    expect(await groups('prompt')).toEqual([[null, 7], [`prompt-${suffix}`, 2]]);
    expect(await groups('provider')).toEqual([['openai', 8], [providerSlug, 1]]);
    expect(await groups('ai_service')).toEqual([['openai', 9]]);
    const logs = await get('/logs/groups/config?columns=error_count');
    expect((logs.body.data as Json[]).map((g) => [g.key, g.requests, g.error_count])).toEqual([[null, 6, 0], [configId, 3, 0]]);
  });

  test('filters: config_id by id or slug, prompt_id, prompt_version, provider by type or slug, ai_service, user_id', async () => {
    const count = async (query: string) => {
      const answer = await get(`/analytics/summary?${query}`);
      expect([query, answer.status]).toEqual([query, 200]);
      return answer.body.requests;
    };
    expect(await count(`config_id=${configId}`)).toBe(3);
    expect(await count(`config_id=${configSlug}`)).toBe(3);
    expect(await count('config_id=no-such-config')).toBe(0);
    expect(await count(`prompt_id=prompt-${suffix}`)).toBe(2);
    expect(await count(`prompt_id=prompt-${suffix}&prompt_version=2`)).toBe(1);
    expect(await count(`provider=${providerSlug}`)).toBe(1);
    expect(await count('provider=openai')).toBe(9);
    expect(await count(`ai_service=openai`)).toBe(9);
    expect(await count('ai_service=anthropic')).toBe(0);
    expect(await count(`user_id=${userA}`)).toBe(4);
    expect(await count(`user_id=${userB},${userA}`)).toBe(7);
    const list = await gw().call<{ data: Json[] }>('GET', `/logs?config_id=${configSlug}&page_size=50`);
    expect(list.body.data.map((l) => l.config_id)).toEqual([configId, configId, configId]);
    // The list shows the columns: the prompt's calls, and the stored provider's.
    const prompted = await gw().call<{ data: Json[] }>('GET', `/logs?prompt_id=prompt-${suffix}&page_size=50`);
    expect(prompted.body.data.map((l) => [l.prompt_id, l.prompt_version, l.user_id]).sort()).toEqual([
      [`prompt-${suffix}`, 1, userA],
      [`prompt-${suffix}`, 2, userA],
    ]);
    const stored = await gw().call<{ data: Json[] }>('GET', `/logs?provider=${providerSlug}`);
    expect(stored.body.data.map((l) => [l.provider, l.provider_slug])).toEqual([['openai', providerSlug]]);
    expect((await get('/analytics/summary?prompt_version=x')).status).toBe(400);
    expect((await get(`/analytics/summary?config_id=${'x'.repeat(65)}`)).status).toBe(400);
  });

  test('users: distinct users of user-bound keys (two users, three keys; service keys count none), in the summary and a graph', async () => {
    const summary = await get('/analytics/summary');
    expect([summary.body.requests, summary.body.users]).toEqual([9, 2]);
    expect((await get(`/analytics/summary?api_key_id=${rows.find((r) => r.user_id === null)!.api_key_id}`)).body.users).toBe(0);
    const from = Math.min(...rows.map((r) => r.created_at)) - 60_000;
    const to = from + 3_600_000;
    const graph = await get(`/analytics/graphs/users?time_of_generation_min=${from}&time_of_generation_max=${to}`);
    const size = graph.body.bucket_size_ms as number;
    const want = new Map<string, Set<string>>();
    for (const r of rows) {
      const bucket = new Date(r.created_at - (r.created_at % size)).toISOString();
      const users = want.get(bucket) ?? new Set<string>();
      if (r.user_id) users.add(r.user_id);
      want.set(bucket, users);
    }
    const got = (graph.body.data as Json[]).filter((p) => want.has(p.timestamp as string)).map((p) => [p.timestamp, p.users]);
    expect(got).toEqual([...want].sort().map(([bucket, users]) => [bucket, users.size]));
  });

  test('the config and prompt filters have their indexes: (organisation_id, config_id | prompt_id, created_at)', async () => {
    const { database } = gw();
    const names =
      database.dialect === 'sqlite'
        ? database.db.$client.query<{ name: string }, []>("SELECT name FROM pragma_index_list('request_logs')").all().map((r) => r.name)
        : ((await database.db.$client.query("SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'request_logs'"))[0] as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['request_logs_org_config_created', 'request_logs_org_prompt_created']));
  });
});
