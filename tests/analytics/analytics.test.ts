// The analytics routes over HTTP on SQLite and MariaDB, with logs the request log wrote for real gateway calls to the
// local OpenAI mock: priced models (cost from the pricing catalogue), delays that spread the latencies, 500s and
// 400s, metadata, keys of two members. Every column of every group, the summary and a graph are compared with what
// the stored rows say by the documented definitions (nearest-rank percentiles, sums, rates), computed here in plain
// TypeScript; and the visibility rules: a member without membersViewAllData sees only their own keys' logs,
// membersViewAnalytics off closes the analytics routes to members, owners see everything.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { requestLogs, RequestLogServices } from '@gateway/plugin-request-log';
import type { Row as SdkRow } from '@gateway/sdk';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';

type Row = SdkRow<typeof requestLogs>;

const COLUMNS = [
  'cost',
  'total_tokens',
  'avg_tokens',
  'avg_input_tokens',
  'avg_output_tokens',
  'avg_latency',
  'p95_latency',
  'p99_latency',
  'success_rate',
  'error_count',
  'cache_hit_rate',
  'last_seen',
  'first_seen',
];

/** The nearest-rank percentile: the ⌈p·n/100⌉-th smallest. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
}

const sum = (xs: (number | null)[]) => xs.reduce<number>((a, x) => a + (x ?? 0), 0);
const avgOf = (xs: (number | null)[]) => {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? sum(known) / known.length : null;
};

/** What a group of rows should say, column by column. */
function expected(rows: Row[]): Record<string, unknown> {
  const errors = rows.filter((r) => r.status >= 400).length;
  const costs = rows.map((r) => r.cost_cents).filter((c): c is number => c !== null);
  return {
    requests: rows.length,
    cost: costs.length ? sum(costs) : null,
    total_tokens: sum(rows.map((r) => r.total_tokens)),
    avg_tokens: avgOf(rows.map((r) => r.total_tokens)),
    avg_input_tokens: avgOf(rows.map((r) => r.prompt_tokens)),
    avg_output_tokens: avgOf(rows.map((r) => r.completion_tokens)),
    avg_latency: sum(rows.map((r) => r.latency_ms)) / rows.length,
    p95_latency: percentile(rows.map((r) => r.latency_ms), 95),
    p99_latency: percentile(rows.map((r) => r.latency_ms), 99),
    success_rate: (rows.length - errors) / rows.length,
    error_count: errors,
    cache_hit_rate: rows.filter((r) => r.cache_status === 'HIT' || r.cache_status === 'SEMANTIC_HIT').length / rows.length,
    last_seen: new Date(Math.max(...rows.map((r) => r.created_at))).toISOString(),
    first_seen: new Date(Math.min(...rows.map((r) => r.created_at))).toISOString(),
  };
}

/** Numbers compared to 1e-9 relative (sums of doubles may be added in another order by the database). */
function close(actual: Record<string, unknown>, want: Record<string, unknown>, label: string): void {
  for (const [name, value] of Object.entries(want)) {
    const got = actual[name];
    if (typeof value === 'number' && typeof got === 'number' && !Number.isInteger(value))
      expect([label, name, Math.abs(got - value) <= 1e-9 * Math.max(1, Math.abs(value))]).toEqual([label, name, true]);
    else expect([label, name, got]).toEqual([label, name, value]);
  }
}

describe.each(E2E_DIALECTS)('analytics routes (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  let member: { secret: string; id: string };
  let other: { secret: string; id: string };
  let rows: Row[] = [];
  const runId = crypto.randomUUID();

  async function chat(key: string, model: string, team: string, behavior?: Parameters<OpenAIMock['enqueue']>[0]): Promise<void> {
    if (behavior) mock.enqueue(behavior);
    const response = await gw().gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': key,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': mock.url,
          'x-gateway-metadata': JSON.stringify({ team, run: runId }),
          authorization: 'Bearer sk-test',
        },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello from ${team} with some words` }] }),
      }),
    );
    await response.text();
  }

  const get = async (path: string, key = TEST_ADMIN_KEY) => {
    const answer = await gw().call<Json>('GET', path, undefined, key);
    return answer;
  };

  test('setup: two members make priced, slow, failing and tagged calls; the request log stores them', async () => {
    const { addUser, addKey, workspaceId, gateway, database } = gw();
    const scopes = ['completions.write', 'analytics.read', 'logs.read'];
    member = await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('m@analytics.test', 'member', { [workspaceId]: 'member' }), scopes });
    other = await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('o@analytics.test', 'member', { [workspaceId]: 'member' }), scopes });
    const delays = [0, 30, 60, 90, 120, 150];
    for (const [i, delayMs] of delays.entries()) await chat(member.secret, i % 2 ? 'gpt-4o' : 'gpt-4o-mini', 'red', { kind: 'default', delayMs });
    await chat(member.secret, 'gpt-4o-mini', 'blue', { kind: 'error', status: 500 });
    await chat(other.secret, 'gpt-4o', 'blue', { kind: 'default', delayMs: 200 });
    await chat(other.secret, 'gpt-4o-mini', 'blue', { kind: 'error', status: 400 });
    await chat(other.secret, 'gpt-4o-mini', 'green');
    await gateway.service(RequestLogServices.queue).flush();
    rows = await database.select(requestLogs, { fresh: true });
    expect(rows.length).toBe(10);
    // The calls did what the test needs: priced rows, errors, distinct latencies.
    expect(rows.filter((r) => r.cost_cents !== null && r.cost_cents > 0).length).toBeGreaterThanOrEqual(6);
    expect(rows.filter((r) => r.status >= 400).map((r) => r.status).sort()).toEqual([400, 500]);
    expect(new Set(rows.map((r) => r.latency_ms)).size).toBeGreaterThan(5);
  });

  test("admin/analytics' index on request_logs (organisation_id, api_key_id, created_at) exists on both dialects", async () => {
    const { database } = gw();
    const names =
      database.dialect === 'sqlite'
        ? database.db.$client.query<{ name: string }, []>("SELECT name FROM pragma_index_list('request_logs')").all().map((r) => r.name)
        : ((await database.db.$client.query("SELECT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'request_logs'"))[0] as { name: string }[]).map((r) => r.name);
    expect(names).toContain('request_logs_org_key_created');
  });

  test('the summary: requests, cost, tokens, latency p50/p95/p99, success and cache hit rates', async () => {
    const answer = await get('/analytics/summary');
    expect(answer.status).toBe(200);
    const want = expected(rows);
    close(
      answer.body,
      {
        object: 'analytics_summary',
        requests: 10,
        cost: want.cost,
        total_tokens: want.total_tokens,
        input_tokens: sum(rows.map((r) => r.prompt_tokens)),
        output_tokens: sum(rows.map((r) => r.completion_tokens)),
        avg_latency: want.avg_latency,
        p50_latency: percentile(rows.map((r) => r.latency_ms), 50),
        p95_latency: want.p95_latency,
        p99_latency: want.p99_latency,
        success_rate: 0.8,
        error_count: 2,
        cache_hits: 0,
        cache_hit_rate: 0,
      },
      'summary',
    );
  });

  const keyOf: Record<string, (r: Row) => unknown> = {
    model: (r) => r.model,
    ai_service: (r) => r.provider,
    status_code: (r) => r.status,
    api_key: (r) => r.api_key_id,
    workspace: (r) => r.workspace_id,
    'metadata.team': (r) => r.metadata?.team ?? null,
  };

  for (const groupBy of Object.keys(keyOf))
    for (const route of ['analytics', 'logs'])
      test(`/${route}/groups/${groupBy}: every column of every group, sorted by requests then key`, async () => {
        const answer = await get(`/${route}/groups/${groupBy}?columns=${COLUMNS.join(',')}&page_size=50`);
        expect(answer.status).toBe(200);
        const groups = new Map<unknown, Row[]>();
        for (const row of rows) groups.set(keyOf[groupBy]!(row), [...(groups.get(keyOf[groupBy]!(row)) ?? []), row]);
        const data = answer.body.data as Json[];
        expect(answer.body.total).toBe(groups.size);
        expect(data.length).toBe(groups.size);
        for (const group of data) close(group, { ...expected(groups.get(group.key)!) }, `${groupBy}=${String(group.key)}`);
        const order = data.map((g) => [g.requests, g.key]);
        const sorted = [...order].sort((a, b) => (b[0] as number) - (a[0] as number) || String(a[1]).localeCompare(String(b[1])));
        expect(order).toEqual(sorted);
      });

  test('groups: the count only by default; sorted by a column; paginated; unknown groupBy and columns are 400', async () => {
    const plain = await get('/analytics/groups/model');
    expect((plain.body.data as Json[]).map((g) => Object.keys(g).sort())).toEqual([['key', 'requests'], ['key', 'requests']]);
    const byLatency = await get('/analytics/groups/status_code?columns=p99_latency&order_by=p99_latency&order=asc');
    const values = (byLatency.body.data as Json[]).map((g) => g.p99_latency as number);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    const page2 = await get('/analytics/groups/metadata.team?page_size=1&current_page=1');
    expect([page2.body.total, (page2.body.data as Json[]).map((g) => g.key)]).toEqual([3, ['blue']]); // current_page is 0-based: red (6), blue (3), green (1)
    expect((await get('/analytics/groups/colour')).status).toBe(400);
    expect((await get('/analytics/groups/constructor')).status).toBe(400); // an object's own keys only
    expect((await get('/analytics/groups/metadata.')).status).toBe(400);
    expect((await get('/analytics/groups/model?columns=vibes')).status).toBe(400);
    expect((await get('/analytics/groups/model?order_by=cost')).status).toBe(400);
  });

  test('a graph: buckets chosen from the range, each holding what its rows say, empty ones zero', async () => {
    const from = Math.min(...rows.map((r) => r.created_at)) - 60_000;
    const to = from + 2 * 3_600_000;
    const answer = await get(`/analytics/graphs/requests?time_of_generation_min=${from}&time_of_generation_max=${to}`);
    expect(answer.status).toBe(200);
    expect(answer.body.bucket_size_ms).toBe(5 * 60_000); // 2 hours: 1-minute buckets would be 120 > 100
    const data = answer.body.data as Json[];
    const counts = new Map<string, number>();
    for (const r of rows) {
      const bucket = new Date(r.created_at - (r.created_at % 300_000)).toISOString();
      counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
    }
    expect(data.map((p) => [p.timestamp, p.requests]).filter(([, n]) => n !== 0)).toEqual([...counts].sort());
    expect(sum(data.map((p) => p.requests as number))).toBe(10);
    const latency = await get(`/analytics/graphs/latency?time_of_generation_min=${from}&time_of_generation_max=${to}`);
    const point = (latency.body.data as Json[]).find((p) => p.timestamp === [...counts.keys()][0])!;
    const inBucket = rows.filter((r) => new Date(r.created_at - (r.created_at % 300_000)).toISOString() === point.timestamp).map((r) => r.latency_ms);
    expect([point.p50_latency, point.p95_latency, point.p99_latency]).toEqual([percentile(inBucket, 50), percentile(inBucket, 95), percentile(inBucket, 99)]);
    expect((await get('/analytics/graphs/vibes')).status).toBe(400);
  });

  test('filters apply: metadata, status, api key', async () => {
    const red = await get(`/analytics/summary?metadata=${encodeURIComponent(JSON.stringify({ team: 'red' }))}`);
    expect(red.body.requests).toBe(6);
    expect((await get('/analytics/summary?status=500,400')).body.requests).toBe(2);
    expect((await get(`/analytics/summary?api_key_id=${other.id}`)).body.requests).toBe(3);
  });

  test('visibility: a member without membersViewAllData sees only their keys; membersViewAnalytics off is 403; owners see all', async () => {
    const { call } = gw();
    expect((await get('/analytics/summary', other.secret)).body.requests).toBe(10);
    expect((await call('PUT', '/settings/security', { membersViewAllData: false })).status).toBe(200);
    expect((await get('/analytics/summary', other.secret)).body.requests).toBe(3);
    const groups = await get('/logs/groups/api_key', member.secret);
    expect((groups.body.data as Json[]).map((g) => [g.key, g.requests])).toEqual([[member.id, 7]]);
    expect((await call('PUT', '/settings/security', { membersViewAnalytics: false })).status).toBe(200);
    expect((await get('/analytics/summary', other.secret)).status).toBe(403);
    expect((await get('/analytics/groups/model', other.secret)).status).toBe(403);
    expect((await get('/logs/groups/model', other.secret)).status).toBe(200);
    expect((await get('/analytics/summary')).body.requests).toBe(10);
    await call('PUT', '/settings/security', { membersViewAllData: null, membersViewAnalytics: null });
  });

  test('metadata hidden from organisation admins: grouping or filtering by it is 403 to them, not to owners', async () => {
    const { call, addUser, addKey, workspaceId } = gw();
    const admin = await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('admin@analytics.test', 'admin'), scopes: ['analytics.read', 'logs.read'] });
    const team = `metadata=${encodeURIComponent(JSON.stringify({ team: 'red' }))}`;
    expect((await get('/analytics/groups/metadata.team', admin.secret)).status).toBe(200);
    expect((await call('PUT', '/settings/security', { organisationAdminsViewLogMetadata: false })).status).toBe(200);
    expect((await get('/analytics/groups/metadata.team', admin.secret)).status).toBe(403);
    expect((await get('/logs/groups/metadata.team', admin.secret)).status).toBe(403);
    expect((await get(`/analytics/summary?${team}`, admin.secret)).status).toBe(403);
    expect((await get('/analytics/groups/model', admin.secret)).body.total).toBe(2);
    // Owners always see metadata; the organisation-service key acts as an admin, so it is refused too.
    const owner = await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('owner@analytics.test', 'owner'), scopes: ['analytics.read'] });
    expect((await get('/analytics/groups/metadata.team', owner.secret)).status).toBe(200);
    expect((await get('/analytics/groups/metadata.team')).status).toBe(403);
    await call('PUT', '/settings/security', { organisationAdminsViewLogMetadata: null });
  });
});
