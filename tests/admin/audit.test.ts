// The audit log end to end over HTTP, on SQLite and MariaDB: a gateway with the repository's plugins plus a small
// admin plugin from a temporary folder (tests/helpers/notes-plugin.ts) whose routes change rows and fill
// req.audit. A successful change leaves one entry (who, what, when, before, after; secret-looking fields redacted),
// a refused one (4xx) none; GET /audit-logs filters, pages and orders newest first, for organisation owners and
// admins with audit_logs.read only; AUDIT_LOGS_ENABLED=OFF records nothing and closes the routes.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { organisations, users, workspaces } from '@gateway/admin-identity';
import { DIALECTS, openTestDatabase, type TestDatabase } from '@gateway/db/testing';
import { asc, type Database, eq } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { AuditLogStore, auditLogs } from '@gateway/admin-audit';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type NotesProject, writeNotesProject } from '../helpers/notes-plugin.ts';

const T = 60_000;

interface Answer<B = Record<string, unknown>> {
  status: number;
  body: B;
}

interface Entry {
  object: string;
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  actor: { api_key_id: string; user_id: string | null; key_type: string } | null;
  action: string;
  method: string;
  path: string;
  resource: string | null;
  resource_id: string | null;
  before: unknown;
  after: unknown;
  status: number;
  created_at: string;
}

type EntryList = { object: 'list'; data: Entry[]; total: number };
type ErrorBody = { error: { code: string; type: string; param: string | null; message: string } };

async function call<B = Record<string, unknown>>(gw: Gateway, method: string, path: string, opts: { key?: string | null; body?: unknown } = {}): Promise<Answer<B>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.key !== null) headers['x-gateway-api-key'] = opts.key ?? TEST_ADMIN_KEY;
  const res = await gw.handle(
    new Request(`http://gateway.local/v1${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }),
  );
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as B };
}

const auditList = (gw: Gateway, query = '', key?: string) => call<EntryList>(gw, 'GET', `/audit-logs${query}`, { key });

/** A key stored straight in the table (the api-keys routes belong to another package); returns its secret and id. */
async function seedKey(
  db: Database,
  organisationId: string,
  fields: { type: 'organisation-service' | 'workspace-service' | 'workspace-user'; scopes: string[]; workspace_id?: string; user_id?: string },
): Promise<{ secret: string; id: string }> {
  const secret = `gw-audit-test-${crypto.randomUUID()}`;
  const id = crypto.randomUUID();
  await db.insert(apiKeys, {
    id,
    organisation_id: organisationId,
    workspace_id: fields.workspace_id ?? null,
    user_id: fields.user_id ?? null,
    name: `test ${fields.type}`,
    type: fields.type,
    hash: hashSecret(secret),
    prefix_hint: secret.slice(0, 8),
    scopes: fields.scopes,
  });
  return { secret, id };
}

/** Entries are ordered by their millisecond; a pause keeps consecutive changes apart. */
const tick = () => Bun.sleep(3);

for (const dialect of DIALECTS) {
  describe(`audit log over HTTP [${dialect}]`, () => {
    let t: TestDatabase;
    let notes: NotesProject;
    let gw: Gateway;
    let orgId = '';
    let wsId = '';
    let bootstrapKeyId = '';
    const keys: Record<'reader' | 'notesOnly' | 'workspace' | 'adminUser' | 'memberUser', { secret: string; id: string }> = {} as never;
    let adminUserId = '';
    let noteId = '';
    let startedAt = 0;

    beforeAll(async () => {
      t = await openTestDatabase(dialect);
      notes = writeNotesProject();
      gw = await startInProcessGateway({ DATABASE_URL: t.url }, [ROOT, notes.root]);
      const db = t.database;
      const [org] = await db.select(organisations, { limit: 1 });
      const [ws] = await db.select(workspaces, { orderBy: (c) => asc(c.created_at), limit: 1 });
      const [bootstrap] = await db.select(apiKeys, { where: (c) => eq(c.hash, hashSecret(TEST_ADMIN_KEY)) });
      orgId = org!.id;
      wsId = ws!.id;
      bootstrapKeyId = bootstrap!.id;
      adminUserId = crypto.randomUUID();
      const memberUserId = crypto.randomUUID();
      await db.insert(users, [
        { id: adminUserId, organisation_id: orgId, email: `admin-${adminUserId}@example.com`, role: 'admin' },
        { id: memberUserId, organisation_id: orgId, email: `member-${memberUserId}@example.com`, role: 'member' },
      ]);
      keys.reader = await seedKey(db, orgId, { type: 'organisation-service', scopes: ['audit_logs.read'] });
      keys.notesOnly = await seedKey(db, orgId, { type: 'organisation-service', scopes: ['test_notes.read', 'test_notes.write'] });
      keys.workspace = await seedKey(db, orgId, { type: 'workspace-service', scopes: ['audit_logs.read', 'test_notes.write'], workspace_id: wsId });
      keys.adminUser = await seedKey(db, orgId, { type: 'workspace-user', scopes: ['audit_logs.read', 'test_notes.write'], workspace_id: wsId, user_id: adminUserId });
      keys.memberUser = await seedKey(db, orgId, { type: 'workspace-user', scopes: ['audit_logs.read'], workspace_id: wsId, user_id: memberUserId });
    }, T);

    afterAll(async () => {
      await gw?.close();
      notes?.remove();
      await t?.drop();
    }, T);

    test('a change leaves one entry: who, what, when, before and after, secrets redacted', async () => {
      expect((await auditList(gw)).body).toEqual({ object: 'list', data: [], total: 0 });
      startedAt = Date.now();
      const created = await call<{ id: string }>(gw, 'POST', '/test-notes', { body: { title: 'first' } });
      expect(created.status).toBe(201);
      noteId = created.body.id;

      const list = await auditList(gw);
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      const entry = list.body.data[0]!;
      expect(entry).toEqual({
        object: 'audit_log',
        id: expect.any(String),
        organisation_id: orgId,
        workspace_id: wsId,
        actor: { api_key_id: bootstrapKeyId, user_id: null, key_type: 'organisation-service' },
        action: 'create',
        method: 'POST',
        path: '/v1/test-notes',
        resource: 'test_note',
        resource_id: noteId,
        before: null,
        after: { id: noteId, title: 'first', secret: '[redacted]', nested: { api_key: '[redacted]', key_type: 'plain' } },
        status: 201,
        created_at: expect.any(String),
      });
      const at = Date.parse(entry.created_at);
      expect(at).toBeGreaterThanOrEqual(startedAt);
      expect(at).toBeLessThanOrEqual(Date.now());

      const one = await call<Entry>(gw, 'GET', `/audit-logs/${entry.id}`);
      expect(one).toEqual({ status: 200, body: entry });

      // What is stored holds no secret either.
      const stored = JSON.stringify(await t.database.select(auditLogs));
      expect(stored).not.toContain('note-secret-value');
      expect(stored).not.toContain('sk-should-never-be-stored');
    }, T);

    test('updates and deletes keep the state before and after', async () => {
      await tick();
      expect((await call(gw, 'PUT', `/test-notes/${noteId}`, { body: { title: 'second' } })).status).toBe(200);
      await tick();
      expect((await call(gw, 'DELETE', `/test-notes/${noteId}`)).status).toBe(204);

      const list = await auditList(gw, `?resource=test_note&resource_id=${noteId}`);
      expect(list.body.data.map((e) => [e.action, e.method, e.status])).toEqual([
        ['delete', 'DELETE', 204],
        ['update', 'PUT', 200],
        ['create', 'POST', 201],
      ]);
      const [deleted, updated] = list.body.data;
      expect(updated).toMatchObject({ path: `/v1/test-notes/${noteId}`, before: { id: noteId, title: 'first' }, after: { id: noteId, title: 'second' } });
      expect(deleted).toMatchObject({ before: { id: noteId, title: 'second' }, after: null });
    }, T);

    test('a refused or failed change leaves no entry; reads leave none', async () => {
      const before = (await auditList(gw)).body.total;
      expect((await call<ErrorBody>(gw, 'POST', '/test-notes', { body: {} })).body.error.param).toBe('title'); // 400
      expect((await call(gw, 'PUT', '/test-notes/no-such-note', { body: { title: 'x' } })).status).toBe(404);
      expect((await call(gw, 'DELETE', '/test-notes/no-such-note')).status).toBe(404);
      expect((await call(gw, 'POST', '/test-notes', { key: keys.reader.secret, body: { title: 'no scope' } })).status).toBe(403);
      expect((await call(gw, 'POST', '/test-notes', { key: null, body: { title: 'no key' } })).status).toBe(401);
      expect((await call(gw, 'POST', '/test-notes', { key: 'gw-unknown-key', body: { title: 'bad key' } })).status).toBe(401);
      expect((await call(gw, 'POST', '/test-public-notes', { key: null, body: { title: 'no organisation' } })).status).toBe(400);
      expect((await call(gw, 'GET', '/test-notes')).status).toBe(200);
      expect((await auditList(gw)).body.total).toBe(before);
    }, T);

    test('organisation owners and admins with audit_logs.read may read it; nobody else', async () => {
      expect((await auditList(gw, '', keys.reader.secret)).status).toBe(200);
      expect((await auditList(gw, '', keys.adminUser.secret)).status).toBe(200);
      for (const key of [keys.notesOnly.secret, keys.workspace.secret, keys.memberUser.secret]) {
        const denied = await call<ErrorBody>(gw, 'GET', '/audit-logs', { key });
        expect(denied.status).toBe(403);
        expect(denied.body.error.type).toBe('permission_error');
      }
      expect((await call(gw, 'GET', '/audit-logs', { key: null })).status).toBe(401);
      const list = (await auditList(gw)).body;
      expect((await call(gw, 'GET', `/audit-logs/${list.data[0]!.id}`, { key: keys.memberUser.secret })).status).toBe(403);
    }, T);

    test('filters by actor key and user, resource, action, workspace and time; pages newest first', async () => {
      await tick();
      const byWorkspaceKey = await call<{ id: string }>(gw, 'POST', '/test-notes', { key: keys.workspace.secret, body: { title: 'from a workspace key' } });
      expect(byWorkspaceKey.status).toBe(201);
      await tick();
      const middle = Date.now();
      await tick();
      const byUser = await call<{ id: string }>(gw, 'POST', '/test-notes', { key: keys.adminUser.secret, body: { title: 'from a user' } });
      expect(byUser.status).toBe(201);
      await tick();
      const byNobody = await call<{ id: string }>(gw, 'POST', '/test-public-notes', { key: null, body: { title: 'public', organisation_id: orgId } });
      expect(byNobody.status).toBe(201);

      const all = (await auditList(gw)).body;
      expect(all.total).toBe(6);
      const times = all.data.map((e) => Date.parse(e.created_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect(all.data[0]).toMatchObject({ actor: null, organisation_id: orgId, resource_id: byNobody.body.id, path: '/v1/test-public-notes', workspace_id: null });

      const ids = async (query: string) => (await auditList(gw, query)).body.data.map((e) => e.resource_id);
      expect(await ids(`?api_key_id=${keys.workspace.id}`)).toEqual([byWorkspaceKey.body.id]);
      const [userEntry] = (await auditList(gw, `?user_id=${adminUserId}`)).body.data;
      expect(userEntry).toMatchObject({ resource_id: byUser.body.id, actor: { api_key_id: keys.adminUser.id, user_id: adminUserId, key_type: 'workspace-user' } });
      expect(await ids('?action=delete')).toEqual([noteId]);
      expect(await ids(`?action=create&api_key_id=${bootstrapKeyId}`)).toEqual([noteId]);
      // The notes plugin names the caller's workspace on its keyed creates only.
      expect(await ids(`?workspace_id=${wsId}`)).toEqual([byUser.body.id, byWorkspaceKey.body.id, noteId]);
      expect(await ids(`?from=${new Date(middle).toISOString()}`)).toEqual([byNobody.body.id, byUser.body.id]);
      expect(await ids(`?to=${new Date(middle).toISOString()}&from=${new Date(startedAt).toISOString()}`)).toHaveLength(4);
      expect((await auditList(gw, '?to=2001-01-01')).body).toEqual({ object: 'list', data: [], total: 0 });
      expect((await auditList(gw, '?resource=no_such_thing')).body.total).toBe(0);

      const page = (await auditList(gw, '?page_size=2&current_page=1')).body;
      expect(page.total).toBe(6);
      expect(page.data.map((e) => e.id)).toEqual(all.data.slice(2, 4).map((e) => e.id));

      for (const [query, param] of [
        ['?from=yesterday', 'from'],
        ['?to=2025-13-45', 'to'],
        ['?from=2025-02-01&to=2025-01-01', 'from'],
        ['?page_size=0', 'page_size'],
        ['?current_page=-1', 'current_page'],
        [`?resource_id=${'x'.repeat(192)}`, 'resource_id'],
      ] as const) {
        const bad = await call<ErrorBody>(gw, 'GET', `/audit-logs${query}`);
        expect(bad.status).toBe(400);
        expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param });
      }
    }, T);

    test("another organisation's entries stay invisible", async () => {
      await new AuditLogStore(t.database, () => true).record({
        organisationId: 'another-organisation',
        actor: null,
        action: 'create',
        method: 'POST',
        path: '/v1/test-notes',
        status: 201,
        at: Date.now(),
        resource: 'test_note',
        resourceId: 'theirs',
      });
      const [theirs] = await t.database.select(auditLogs, { where: (c) => eq(c.resource_id, 'theirs') });
      expect(theirs).toBeDefined();
      expect((await auditList(gw, '?resource_id=theirs')).body.total).toBe(0);
      expect((await call(gw, 'GET', `/audit-logs/${theirs!.id}`)).status).toBe(404);
      expect((await call(gw, 'GET', '/audit-logs/no-such-entry')).status).toBe(404);
    }, T);
  });

  describe(`AUDIT_LOGS_ENABLED=OFF [${dialect}]`, () => {
    let t: TestDatabase;
    let notes: NotesProject;
    let gw: Gateway;

    beforeAll(async () => {
      t = await openTestDatabase(dialect);
      notes = writeNotesProject();
      gw = await startInProcessGateway({ DATABASE_URL: t.url, AUDIT_LOGS_ENABLED: 'OFF' }, [ROOT, notes.root]);
    }, T);

    afterAll(async () => {
      await gw?.close();
      notes?.remove();
      await t?.drop();
    }, T);

    test('changes are made but not recorded; the routes answer 403 feature_disabled', async () => {
      const created = await call<{ id: string }>(gw, 'POST', '/test-notes', { body: { title: 'unrecorded' } });
      expect(created.status).toBe(201);
      expect((await call(gw, 'DELETE', `/test-notes/${created.body.id}`)).status).toBe(204);
      for (const path of ['/audit-logs', '/audit-logs/anything']) {
        const res = await call<ErrorBody>(gw, 'GET', path);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('feature_disabled');
      }
      // The table exists (turning the feature on needs no other step) and stays empty.
      expect(await t.database.count(auditLogs)).toBe(0);
    }, T);
  });
}
