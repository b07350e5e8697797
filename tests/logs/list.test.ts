// GET /logs with the common filters and cursor pages, on SQLite and MariaDB, over logs written by real gateway calls
// to the local OpenAI mock (two keys, two models, metadata, failed calls): walking the cursor pages gives exactly the
// matching rows, newest first, each once, also while new rows arrive; the filters (metadata, cost, status, trace id,
// model, workspace by slug) hold across pages; a member without membersViewAllData pages through their own keys'
// rows only; malformed cursors and limits are 400s naming the parameter.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';

interface Page {
  object: string;
  data: Json[];
  next_cursor: string | null;
  total?: number;
}

describe.each(E2E_DIALECTS)('GET /logs: filters and cursor pages (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  let member: string;
  let memberKeyId: string;
  let owner: string;
  /** trace id → what the call was. */
  const calls = new Map<string, { key: 'member' | 'owner'; model: string; batch: string; failed: boolean }>();

  async function chat(key: 'member' | 'owner', model: string, batch: string, failed = false) {
    const trace = `logs-list-${crypto.randomUUID()}`;
    calls.set(trace, { key, model, batch, failed });
    if (failed) mock.enqueue({ kind: 'error', status: 400, message: 'bad request on purpose' });
    const res = await gw().gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': key === 'member' ? member : owner,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': mock.url,
          'x-gateway-trace-id': trace,
          'x-gateway-metadata': JSON.stringify({ batch }),
          authorization: 'Bearer sk-test',
        },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: `call ${calls.size} ${'word '.repeat(calls.size)}` }] }),
      }),
    );
    expect(res.status).toBe(failed ? 400 : 200);
    await res.text();
  }

  const get = async (query: string, key = TEST_ADMIN_KEY) => {
    const answer = await gw().call<Page>('GET', `/logs${query}`, undefined, key);
    expect([query, answer.status]).toEqual([query, 200]);
    return answer.body;
  };
  /** Every page from `query` (which must not carry a cursor), following next_cursor. */
  async function walk(query: string, key = TEST_ADMIN_KEY): Promise<{ rows: Json[]; pages: number }> {
    const rows: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = query.includes('?') ? '&' : '?';
      const page: Page = await get(`${query}${cursor ? `${sep}cursor=${cursor}` : ''}`, key);
      expect(page.total).toBeUndefined();
      rows.push(...page.data);
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    return { rows, pages };
  }
  const ours = (rows: Json[]) => rows.filter((r) => calls.has(String(r.trace_id)));
  const tracesWhere = (pred: (c: { key: string; model: string; batch: string; failed: boolean }) => boolean) =>
    [...calls].filter(([, c]) => pred(c)).map(([t]) => t).sort();
  const sortedTraces = (rows: Json[]) => rows.map((r) => String(r.trace_id)).sort();
  /** Newest first by (created_at, id), no row twice. */
  function expectOrdered(rows: Json[]) {
    const keys = rows.map((r) => [Date.parse(String(r.created_at)), String(r.id)] as const);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1]!, keys[i]!];
      expect(a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])).toBe(true);
    }
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  }

  test('setup: calls from a member’s key and an owner’s key, two models, two batches, some failed', async () => {
    const { addUser, addKey, workspaceId } = gw();
    const memberUser = await addUser('member@logs-list.test', 'member', { [workspaceId]: 'member' });
    const ownerUser = await addUser('owner@logs-list.test', 'owner');
    const scopes = ['completions.write', 'logs.read'];
    const m = await addKey({ type: 'workspace-user', workspaceId, userId: memberUser, scopes });
    member = m.secret;
    memberKeyId = m.id;
    owner = (await addKey({ type: 'workspace-user', workspaceId, userId: ownerUser, scopes })).secret;
    for (let i = 0; i < 7; i++) await chat('member', i % 2 ? 'gpt-4o' : 'gpt-4o-mini', i < 4 ? 'a' : 'b');
    for (let i = 0; i < 5; i++) await chat('owner', 'gpt-4o-mini', i < 2 ? 'a' : 'b');
    await chat('member', 'gpt-4o-mini', 'a', true);
    await chat('owner', 'gpt-4o', 'b', true);
    await gw().gateway.service(RequestLogServices.queue).flush();
  });

  test('cursor pages give every row once, newest first, the same rows as one big page', async () => {
    const all = await get('?page_size=100');
    expect(ours(all.data).length).toBe(calls.size);
    const walked = await walk('?limit=4');
    expect(walked.pages).toBe(Math.ceil(all.data.length / 4));
    expect(walked.rows.map((r) => r.id)).toEqual(all.data.map((r) => r.id));
    expectOrdered(walked.rows);
  });

  test('new rows arriving while paging do not shift the pages after the cursor', async () => {
    const first = await get('?limit=5');
    await chat('owner', 'gpt-4o-mini', 'late');
    await gw().gateway.service(RequestLogServices.queue).flush();
    let rows = [...first.data];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await get(`?limit=5&cursor=${cursor}`);
      rows = rows.concat(page.data);
      cursor = page.next_cursor;
    }
    expectOrdered(rows);
    const late = tracesWhere((c) => c.batch === 'late');
    expect(rows.some((r) => late.includes(String(r.trace_id)))).toBe(false);
    expect(ours(rows).length).toBe(calls.size - 1);
  });

  test('the common filters hold across pages', async () => {
    const meta = encodeURIComponent(JSON.stringify({ batch: 'a' }));
    expect(sortedTraces(ours((await walk(`?limit=2&metadata=${meta}`)).rows))).toEqual(tracesWhere((c) => c.batch === 'a'));
    expect(sortedTraces((await walk('?limit=1&status=400')).rows)).toEqual(tracesWhere((c) => c.failed));
    expect(sortedTraces(ours((await walk('?limit=3&model=gpt-4o&status=200')).rows))).toEqual(tracesWhere((c) => c.model === 'gpt-4o' && !c.failed));
    expect(sortedTraces((await walk(`?limit=3&api_key_id=${memberKeyId}&workspace_id=default`)).rows)).toEqual(tracesWhere((c) => c.key === 'member'));
    const two = tracesWhere((c) => c.key === 'owner').slice(0, 2);
    expect(sortedTraces((await walk(`?limit=1&trace_id=${two.join(',')}`)).rows)).toEqual(two);

    // cost_min: the priced rows at or above the median cost of our successful calls.
    const priced = ours((await get('?page_size=100&status=200')).data).map((r) => ({ trace: String(r.trace_id), cost: (r as { cost_cents?: number }).cost_cents }));
    const costs = priced.map((p) => p.cost).filter((c): c is number => typeof c === 'number').sort((a, b) => a - b);
    expect(costs.length).toBe(priced.length);
    const median = costs[Math.floor(costs.length / 2)]!;
    const expected = priced.filter((p) => p.cost! >= median).map((p) => p.trace).sort();
    expect(sortedTraces(ours((await walk(`?limit=2&status=200&cost_min=${median}`)).rows))).toEqual(expected);
  });

  test('a member without membersViewAllData pages through their own keys’ rows only; the owner through all', async () => {
    expect((await gw().call('PUT', '/settings/security', { membersViewAllData: false })).status).toBe(200);
    try {
      const mine = await walk('?limit=3', member);
      expect(sortedTraces(mine.rows)).toEqual(tracesWhere((c) => c.key === 'member'));
      expectOrdered(mine.rows);
      // A filter naming another key's rows finds none of them.
      expect((await get('?limit=3&status=200&model=gpt-4o-mini', member)).data.every((r) => r.api_key_id === memberKeyId)).toBe(true);
    } finally {
      await gw().call('PUT', '/settings/security', { membersViewAllData: null });
    }
    const everything = await walk('?limit=3', owner);
    expect(sortedTraces(ours(everything.rows))).toEqual([...calls.keys()].sort());
  });

  test('malformed cursors and limits are 400s naming the parameter', async () => {
    for (const [query, param] of [
      ['?cursor=not-a-cursor', 'cursor'],
      [`?cursor=${Buffer.from('[1,2]').toString('base64url')}`, 'cursor'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=2.5', 'limit'],
    ] as const) {
      const answer = await gw().call<Json>('GET', `/logs${query}`);
      expect([query, answer.status, (answer.body.error as { param: string }).param]).toEqual([query, 400, param]);
    }
  });
});
