// The life of log exports on SQLite and MariaDB, over the HTTP routes: GET /logs/exports lists a key's own exports
// (organisation admins: all), newest first, paginated and by status; DELETE removes the record and the file (and is
// "no such export" to other keys); an export interrupted by a restart (its job left running by a process that
// stopped) is marked failed with the interrupted error by the next process's start-up sweep, its partial file
// removed; a finished export past LOG_EXPORTS_RETENTION_HOURS is deleted with its file.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPORT_INTERRUPTED, EXPORT_STALE_MS, logExports, SettingsServices } from '@gateway/admin-settings';
import { eq, Services } from '@gateway/sdk';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';
import { createE2EDatabase, E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startInProcessGateway } from '../helpers/in-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-export-life-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(E2E_DIALECTS)('log exports: list, delete, retention (%s)', (dialect) => {
  const exportsDir = join(dir, dialect);
  const gw = useSettingsGateway(dialect, { GATEWAY_EXPORTS_DIR: exportsDir, LOG_EXPORTS_RETENTION_HOURS: '24' });
  let member: string;
  let other: string;
  const mine: string[] = [];

  const create = async (key: string, format = 'csv') => {
    const created = await gw().call<Json>('POST', '/logs/exports', { format }, key);
    expect(created.status).toBe(202);
    await gw().gateway.service(SettingsServices.logExports).idle();
    return String(created.body.id);
  };
  const fileOf = (id: string, format = 'csv') => join(exportsDir, `${id}.${format}`);

  beforeAll(async () => {
    const { addUser, addKey, workspaceId } = gw();
    const scopes = ['logs.read', 'logs.export'];
    member = (await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('m@life.test', 'member', { [workspaceId]: 'member' }), scopes })).secret;
    other = (await addKey({ type: 'workspace-user', workspaceId, userId: await addUser('o@life.test', 'member', { [workspaceId]: 'member' }), scopes })).secret;
  });

  test('GET /logs/exports: a key lists its own, newest first, paginated; organisation admins list all; status filters', async () => {
    mine.push(await create(member), await create(member, 'jsonl'));
    const theirs = await create(other);
    const list = await gw().call<{ data: Json[]; total: number }>('GET', '/logs/exports', undefined, member);
    expect(list.status).toBe(200);
    expect([list.body.total, list.body.data.map((e) => e.id).sort()]).toEqual([2, [...mine].sort()]);
    // Newest first (ties: the greater id first).
    const order = list.body.data.map((e) => [String(e.created_at), String(e.id)]);
    expect(order).toEqual([...order].sort((a, b) => b[0]!.localeCompare(a[0]!) || b[1]!.localeCompare(a[1]!)));
    const jsonl = list.body.data.find((e) => e.id === mine[1]);
    expect(jsonl).toMatchObject({ object: 'log_export', status: 'succeeded', format: 'jsonl', download_url: `/v1/logs/exports/${mine[1]}/download` });
    const page = await gw().call<{ data: Json[]; total: number }>('GET', '/logs/exports?page_size=1&current_page=1', undefined, member);
    expect([page.body.total, page.body.data.map((e) => e.id)]).toEqual([2, [list.body.data[1]!.id]]);
    const all = await gw().call<{ data: Json[]; total: number }>('GET', '/logs/exports', undefined, TEST_ADMIN_KEY);
    expect(all.body.data.map((e) => e.id).sort()).toEqual([...mine, theirs].sort());
    expect((await gw().call<{ total: number }>('GET', '/logs/exports?status=failed', undefined, member)).body.total).toBe(0);
    expect((await gw().call<{ total: number }>('GET', '/logs/exports?status=succeeded', undefined, member)).body.total).toBe(2);
    expect((await gw().call('GET', '/logs/exports?status=done', undefined, member)).status).toBe(400);
  });

  test('DELETE /logs/exports/:id removes the record and the file; another key cannot; organisation admins can', async () => {
    const [first, second] = mine;
    expect(existsSync(fileOf(first!))).toBe(true);
    expect((await gw().call('DELETE', `/logs/exports/${first}`, undefined, other)).status).toBe(404);
    expect(existsSync(fileOf(first!))).toBe(true);
    expect((await gw().call('DELETE', `/logs/exports/${first}`, undefined, member)).status).toBe(204);
    expect(existsSync(fileOf(first!))).toBe(false);
    expect((await gw().call('GET', `/logs/exports/${first}`, undefined, member)).status).toBe(404);
    expect((await gw().call('DELETE', `/logs/exports/${second}`, undefined, TEST_ADMIN_KEY)).status).toBe(204);
    expect(existsSync(fileOf(second!, 'jsonl'))).toBe(false);
    const audit = await gw().call<{ data: { action: string }[] }>('GET', `/audit-logs?resource=log_export&resource_id=${second}`);
    expect(audit.body.data.map((e) => e.action).sort()).toEqual(['create', 'delete']);
  });

  test('retention: a finished export older than LOG_EXPORTS_RETENTION_HOURS loses its record and file at the sweep', async () => {
    const { database, gateway } = gw();
    const id = await create(member);
    const young = await create(member);
    await database.update(logExports, { completed_at: Date.now() - 25 * 3_600_000 }, (c) => eq(c.id, id));
    await gateway.service(SettingsServices.logExports).sweep();
    expect([existsSync(fileOf(id)), (await gw().call('GET', `/logs/exports/${id}`, undefined, member)).status]).toEqual([false, 404]);
    expect([existsSync(fileOf(young)), (await gw().call<Json>('GET', `/logs/exports/${young}`, undefined, member)).body.status]).toEqual([true, 'succeeded']);
  });
});

describe.each(E2E_DIALECTS)('log exports across a restart (%s)', (dialect) => {
  test('an export left running by a stopped process is marked failed (interrupted) by the next start; its partial file goes', async () => {
    const db = await createE2EDatabase(dialect);
    const exportsDir = join(dir, `restart-${dialect}`);
    const env = { DATABASE_URL: db.url, GATEWAY_EXPORTS_DIR: exportsDir, LOG_EXPORTS_SWEEP_INTERVAL_MS: '3600000' };
    try {
      const first = await startInProcessGateway(env);
      // Its own start-up sweep done first, so only the next process's can mark the jobs below.
      await first.service(SettingsServices.logExports).sweep();
      const database = first.service(Services.database);
      const [orgRow] = (await db.query('SELECT id FROM organisations')) as { id: string }[];
      const stale = Date.now() - EXPORT_STALE_MS - 60_000;
      const job = (status: 'running' | 'pending', heartbeat: number | null) => ({
        id: crypto.randomUUID(),
        organisation_id: orgRow!.id,
        requested_by_api_key_id: crypto.randomUUID(),
        format: 'csv' as const,
        query: {},
        status,
        created_at: stale,
        runner_id: heartbeat === null ? null : 'a-process-that-stopped',
        heartbeat_at: heartbeat,
      });
      const running = job('running', stale);
      const pending = job('pending', null);
      await database.insert(logExports, [running, pending]);
      mkdirSync(exportsDir, { recursive: true });
      writeFileSync(join(exportsDir, `${running.id}.csv`), 'id,trace_id\r\nhalf a file');
      await first.close();

      const second = await startInProcessGateway(env);
      try {
        // The start-up sweep runs off the start: waited for here, without a sweep of the test's own.
        const statuses = async () => (await second.service(Services.database).select(logExports, { fresh: true })).map((r) => [r.id, r.status, r.error]);
        const deadline = Date.now() + 20_000;
        while ((await statuses()).some(([, status]) => status !== 'failed') && Date.now() < deadline) await Bun.sleep(50);
        expect((await statuses()).sort()).toEqual(
          [
            [running.id, 'failed', EXPORT_INTERRUPTED],
            [pending.id, 'failed', EXPORT_INTERRUPTED],
          ].sort(),
        );
        expect(existsSync(join(exportsDir, `${running.id}.csv`))).toBe(false);
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
    }
  }, 60_000);
});
