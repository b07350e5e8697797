// Log exports on SQLite and MariaDB, over rows written by real gateway calls to the local OpenAI mock: an export
// (JSON Lines and CSV, a filter and a saved filter) runs after its POST answered, and its download is exactly the
// list GET /logs gives for the same filters (every field of every row, newest first), with the format's content
// type; CSV quoting survives metadata with commas, quotes and line breaks. Exports are the asking key's (and
// organisation admins'); DATA_EXPORTS_ENABLED=OFF closes the routes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SettingsServices } from '@gateway/admin-settings';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';

/** RFC 4180 rows (quoted fields, doubled quotes, CRLF or LF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field || row.length) rows.push([...row, field]);
  return rows;
}

const asCsvText = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

const dir = mkdtempSync(join(tmpdir(), 'gw-exports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(E2E_DIALECTS)('log exports (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect, { GATEWAY_EXPORTS_DIR: join(dir, dialect) });
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  let member: string;
  let other: string;
  const teams = ['red', 'blue', 'red, "quoted"\nand broken', 'red', 'blue'];
  const ourTraces: string[] = [];

  test('setup: calls with metadata that CSV must quote', async () => {
    const { addUser, addKey, workspaceId } = gw();
    const m = await addUser('m@exports.test', 'member', { [workspaceId]: 'member' });
    const o = await addUser('o@exports.test', 'member', { [workspaceId]: 'member' });
    const scopes = ['completions.write', 'logs.read', 'logs.export', 'logs.write'];
    member = (await addKey({ type: 'workspace-user', workspaceId, userId: m, scopes })).secret;
    other = (await addKey({ type: 'workspace-user', workspaceId, userId: o, scopes })).secret;
    for (const team of teams) {
      const trace = `exports-${crypto.randomUUID()}`;
      ourTraces.push(trace);
      const res = await gw().gateway.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-gateway-api-key': member,
            'x-gateway-provider': 'openai',
            'x-gateway-custom-host': mock.url,
            'x-gateway-trace-id': trace,
            'x-gateway-metadata': JSON.stringify({ team, run: 'exports' }),
            authorization: 'Bearer sk-test',
          },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `export ${team}` }] }),
        }),
      );
      expect(res.status).toBe(200);
      await res.text();
    }
    await gw().gateway.service(RequestLogServices.queue).flush();
  });

  async function exported(body: Json, key = member) {
    const created = await gw().call<Json>('POST', '/logs/exports', body, key);
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ object: 'log_export', format: body.format, download_url: null });
    await gw().gateway.service(SettingsServices.logExports).idle();
    const id = String(created.body.id);
    const status = await gw().call<Json>('GET', `/logs/exports/${id}`, undefined, key);
    expect(status.body).toMatchObject({ status: 'succeeded', download_url: `/v1/logs/exports/${id}/download` });
    const res = await gw().gateway.handle(new Request(`http://gateway.test/v1/logs/exports/${id}/download`, { headers: { 'x-gateway-api-key': key } }));
    expect(res.status).toBe(200);
    return { id, rows: Number(status.body.rows), contentType: res.headers.get('content-type'), text: await res.text() };
  }
  const listed = async (query: string) => (await gw().call<{ data: Json[] }>('GET', `/logs?${query}&page_size=100`, undefined, member)).body.data;

  test('JSON Lines: the download is the list for the same filters, row for row', async () => {
    const metadata = JSON.stringify({ run: 'exports' });
    const out = await exported({ format: 'jsonl', filters: { metadata } });
    expect(out.contentType).toBe('application/x-ndjson; charset=utf-8');
    const lines = out.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Json);
    const list = await listed(`metadata=${encodeURIComponent(metadata)}`);
    expect(list.length).toBe(teams.length);
    expect(lines).toEqual(list);
    expect(out.rows).toBe(list.length);
  });

  test('CSV through a saved filter: a header of the list’s fields, each row the list’s values, quoting kept', async () => {
    const saved = await gw().call<Json>('POST', '/logs/saved-filters', { name: 'exports red', workspace_id: 'default', filters: { metadata: { run: 'exports' }, status: '200' } }, member);
    expect(saved.status).toBe(201);
    const out = await exported({ format: 'csv', saved_filter_id: String(saved.body.id) });
    expect(out.contentType).toBe('text/csv; charset=utf-8');
    const [header, ...rows] = parseCsv(out.text);
    const list = await listed(`metadata=${encodeURIComponent(JSON.stringify({ run: 'exports' }))}&status=200`);
    expect(header).toEqual(Object.keys(list[0]!));
    expect(rows).toEqual(list.map((log) => header!.map((c) => asCsvText(log[c]))));
    const metadataColumn = header!.indexOf('metadata');
    expect(rows.map((r) => JSON.parse(r[metadataColumn]!).team).sort()).toEqual([...teams].sort());
  });

  test('an export is the asking key’s and organisation admins’; bad filters are 400s before any job', async () => {
    const out = await exported({ format: 'jsonl', filters: { model: 'gpt-4o-mini' } });
    expect((await gw().call('GET', `/logs/exports/${out.id}`, undefined, other)).status).toBe(404);
    expect((await gw().call('GET', `/logs/exports/${out.id}/download`, undefined, other)).status).toBe(404);
    expect((await gw().call('GET', `/logs/exports/${out.id}`, undefined, TEST_ADMIN_KEY)).status).toBe(200);
    for (const [body, param] of [
      [{ format: 'xml' }, 'format'],
      [{ format: 'csv', filters: { status: 'abc' } }, 'status'],
      [{ format: 'csv', filters: { bogus: '1' } }, 'filters.bogus'],
    ] as const) {
      const answer = await gw().call<Json>('POST', '/logs/exports', body, member);
      expect([param, answer.status, (answer.body.error as { param: string }).param]).toEqual([param, 400, param]);
    }
    expect((await gw().call('POST', '/logs/exports', { format: 'csv', saved_filter_id: 'nope' }, member)).status).toBe(404);
  });
});

describe('DATA_EXPORTS_ENABLED=OFF', () => {
  const gw = useSettingsGateway('sqlite', { DATA_EXPORTS_ENABLED: 'OFF', GATEWAY_EXPORTS_DIR: join(dir, 'off') });
  test('the export routes answer 403 feature_disabled; the log list stays', async () => {
    for (const [method, path, body] of [
      ['POST', '/logs/exports', { format: 'jsonl' }],
      ['GET', `/logs/exports/${crypto.randomUUID()}`, undefined],
      ['GET', `/logs/exports/${crypto.randomUUID()}/download`, undefined],
    ] as const) {
      const answer = await gw().call<Json>(method, path, body);
      expect([path, answer.status, (answer.body.error as { code: string }).code]).toEqual([path, 403, 'feature_disabled']);
    }
    expect((await gw().call('GET', '/logs')).status).toBe(200);
  });
});
