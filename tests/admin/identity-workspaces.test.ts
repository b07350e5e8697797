// /workspaces through the server's admin dispatcher on both dialects: who sees and changes what, slugs, archive
// rules, events, audit records, and 400s that name the field.
import { describe, expect, test } from 'bun:test';
import { checkSlug, slugFromName, workspaceMembers, workspaces } from '@gateway/admin-identity';
import type { AdminEventMap } from '@gateway/admin-kit';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { eq } from '@gateway/sdk';
import { identityHarness, refusal } from './identity-support.ts';

interface WorkspaceBody {
  id: string;
  slug: string;
  name: string;
  status: string;
  description: string | null;
  defaults: Record<string, unknown>;
  last_reset_at: string | null;
  api_keys?: unknown[];
}
interface ListBody<T> {
  object: string;
  data: T[];
  total: number;
}

describe('workspace slugs', () => {
  test('made from names: accents dropped, separators collapsed, short or empty names padded, never an id', () => {
    expect(slugFromName('Équipe  Données / Paris')).toBe('equipe-donnees-paris');
    expect(slugFromName('!!!')).toBe('workspace');
    expect(slugFromName('A')).toBe('workspace-a');
    expect(slugFromName('x'.repeat(300))).toHaveLength(56);
    const id = crypto.randomUUID();
    expect(slugFromName(id)).toBe(`workspace-${id}`.slice(0, 56));
    for (const name of ['Équipe', '!!!', 'A', 'x'.repeat(300), id, '-a-b-', '日本語']) expect(() => checkSlug(slugFromName(name))).not.toThrow();
  });
});

for (const dialect of DIALECTS) {
  describe(`identity /workspaces [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      const h = await identityHarness(database);
      const seen: { name: string; event: unknown }[] = [];
      for (const name of ['member.added', 'member.removed', 'workspace.archived'] as const)
        h.events.on(name, (event: AdminEventMap[typeof name]) => void seen.push({ name, event }));
      return { h, database, seen };
    }

    test('create: slug from the name, unique per organisation; a given slug is checked; 409 on a taken one', async () => {
      const { h, seen } = await setup();
      const a = await h.call('POST', '/workspaces', { body: { name: 'Équipe Données', description: 'Data team', defaults: { metadata: { team: 'data' } } } });
      expect(a.status).toBe(201);
      const wa = a.body as WorkspaceBody;
      expect(wa).toMatchObject({ object: 'workspace', slug: 'equipe-donnees', name: 'Équipe Données', status: 'active', description: 'Data team', defaults: { metadata: { team: 'data' } }, last_reset_at: null, api_keys: [] });
      const b = await h.call('POST', '/workspaces', { body: { name: 'Equipe  donnees!' } });
      expect((b.body as WorkspaceBody).slug).toBe('equipe-donnees-2');
      expect((await h.call('POST', '/workspaces', { body: { name: 'X', slug: 'equipe-donnees' } })).status).toBe(409);
      expect(refusal(await h.call('POST', '/workspaces', { body: { name: 'X', slug: 'equipe-donnees' } }))).toEqual({ status: 409, param: 'slug' });
      const c = await h.call('POST', '/workspaces', { body: { name: 'X', slug: 'custom-1' } });
      expect((c.body as WorkspaceBody).slug).toBe('custom-1');
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace', resourceId: (c.body as WorkspaceBody).id, action: 'create', method: 'POST', status: 201 });
      expect(seen).toEqual([]); // no members given, no events
    });

    test('create: concurrent creates of one name all succeed with distinct slugs', async () => {
      const { h } = await setup();
      const answers = await Promise.all([1, 2, 3, 4].map(() => h.call('POST', '/workspaces', { body: { name: 'Busy' } })));
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
      expect(answers.map((a) => (a.body as WorkspaceBody).slug).sort()).toEqual(['busy', 'busy-2', 'busy-3', 'busy-4']);
    });

    test('create: bad input is a 400 naming the field, and nothing is written', async () => {
      const { h, database } = await setup();
      const member = await h.user({ role: 'member' });
      const before = await database.count(workspaces);
      const cases: [unknown, string | null][] = [
        [undefined, 'body'],
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'a', slug: 'Bad Slug' }, 'slug'],
        [{ name: 'a', slug: 'x' }, 'slug'],
        [{ name: 'a', slug: '-ab' }, 'slug'],
        [{ name: 'a', slug: crypto.randomUUID() }, 'slug'],
        [{ name: 'a', extra: 1 }, 'extra'],
        [{ name: 'a', defaults: { metadata: { k: 1 } } }, 'defaults.metadata.k'],
        [{ name: 'a', defaults: { metadata: { ['k'.repeat(65)]: 'v' } } }, 'defaults.metadata'],
        [{ name: 'a', defaults: { other: true } }, 'defaults.other'],
        [{ name: 'a', users: [{ id: member.id, role: 'boss' }] }, 'users[0].role'],
        [{ name: 'a', users: [{ id: member.id }, { id: 'nobody' }] }, 'users[1].id'],
        [{ name: 'a', users: [{ id: member.id }, { id: member.id }] }, 'users[1].id'],
      ];
      for (const [body, param] of cases) expect(refusal(await h.call('POST', '/workspaces', { body }))).toEqual({ status: 400, param });
      expect(await database.count(workspaces)).toBe(before);
      expect(await database.count(workspaceMembers)).toBe(0);
    });

    test('create with users: memberships, member.added via direct, and the keys listeners give back', async () => {
      const { h, database, seen } = await setup();
      const alice = await h.user({ role: 'member' });
      const bob = await h.user({ role: 'member' });
      h.events.on('member.added', (e) => ({ api_key: { id: `key-${e.userId}`, key: `secret-${e.userId}`, workspace_id: e.workspaceId, user_id: e.userId, pending_secret: false } }));
      const res = await h.call('POST', '/workspaces', { body: { name: 'Team', users: [{ id: alice.id, role: 'MANAGER' }, { id: bob.id }] } });
      expect(res.status).toBe(201);
      const w = res.body as WorkspaceBody;
      expect(w.api_keys).toEqual([
        { id: `key-${alice.id}`, key: `secret-${alice.id}`, workspace_id: w.id, user_id: alice.id, pending_secret: false },
        { id: `key-${bob.id}`, key: `secret-${bob.id}`, workspace_id: w.id, user_id: bob.id, pending_secret: false },
      ]);
      expect(seen.map((s) => s.event)).toEqual([
        { organisationId: h.organisationId, workspaceId: w.id, userId: alice.id, role: 'manager', via: 'direct', callerUserId: null },
        { organisationId: h.organisationId, workspaceId: w.id, userId: bob.id, role: 'member', via: 'direct', callerUserId: null },
      ]);
      const members = await database.select(workspaceMembers, { where: (c) => eq(c.workspace_id, w.id) });
      expect(members.map((m) => [m.user_id, m.role]).sort()).toEqual([[alice.id, 'manager'], [bob.id, 'member']].sort());
      // The secrets are in the answer only: never in the audit record.
      expect(JSON.stringify(h.audits.at(-1))).not.toContain('secret-');
    });

    test('only organisation owners and admins (and organisation keys) create workspaces', async () => {
      const { h } = await setup();
      const member = await h.user({ role: 'member', workspaces: [[h.workspaceId, 'admin']] });
      const admin = await h.user({ role: 'admin' });
      const wsKey = await h.key({ type: 'workspace-service' });
      expect((await h.call('POST', '/workspaces', { key: member.key, body: { name: 'M' } })).status).toBe(403);
      expect((await h.call('POST', '/workspaces', { key: wsKey, body: { name: 'W' } })).status).toBe(403);
      expect((await h.call('POST', '/workspaces', { key: admin.key, body: { name: 'A' } })).status).toBe(201);
      const readOnly = await h.key({ type: 'organisation-service', scopes: ['workspaces.read'] });
      expect((await h.call('POST', '/workspaces', { key: readOnly, body: { name: 'R' } })).status).toBe(403);
      expect((await h.call('GET', '/workspaces', { key: readOnly })).status).toBe(200);
      expect((await h.call('GET', '/workspaces', { key: null })).status).toBe(401);
    });

    test('list: active by default, status filter, archived for organisation admins only, members see their own, pages', async () => {
      const { h, database } = await setup();
      const ids: string[] = [];
      for (const n of [1, 2, 3]) ids.push(((await h.call('POST', '/workspaces', { body: { name: `W${n}` } })).body as WorkspaceBody).id);
      await database.update(workspaces, { status: 'archived' }, (c) => eq(c.id, ids[2]!));
      const all = (await h.call('GET', '/workspaces')).body as ListBody<WorkspaceBody>;
      expect(all.object).toBe('list');
      expect(all.data.map((w) => w.slug)).toEqual(['default', 'w1', 'w2']);
      expect(all.total).toBe(3);
      expect(((await h.call('GET', '/workspaces', { query: { status: 'archived' } })).body as ListBody<WorkspaceBody>).data.map((w) => w.slug)).toEqual(['w3']);
      expect(((await h.call('GET', '/workspaces', { query: { status: 'active, ARCHIVED' } })).body as ListBody<WorkspaceBody>).total).toBe(4);
      const paged = (await h.call('GET', '/workspaces', { query: { status: 'active,archived', page_size: '2', current_page: '1' } })).body as ListBody<WorkspaceBody>;
      expect([paged.data.map((w) => w.slug), paged.total]).toEqual([['w2', 'w3'], 4]);
      expect(refusal(await h.call('GET', '/workspaces', { query: { status: 'deleted' } }))).toEqual({ status: 400, param: 'status' });
      expect(refusal(await h.call('GET', '/workspaces', { query: { status: '' } }))).toEqual({ status: 400, param: 'status' });
      expect(refusal(await h.call('GET', '/workspaces', { query: { page_size: '0' } }))).toEqual({ status: 400, param: 'page_size' });

      const member = await h.user({ role: 'member', workspaces: [[ids[0]!, 'member'], [ids[2]!, 'admin']] });
      const mine = (await h.call('GET', '/workspaces', { key: member.key })).body as ListBody<WorkspaceBody>;
      expect([mine.data.map((w) => w.slug), mine.total]).toEqual([['w1'], 1]);
      expect((await h.call('GET', '/workspaces', { key: member.key, query: { status: 'archived' } })).status).toBe(403);
      const admin = await h.user({ role: 'admin' });
      expect(((await h.call('GET', '/workspaces', { key: admin.key, query: { status: 'archived' } })).body as ListBody<WorkspaceBody>).total).toBe(1);
      const wsKey = await h.key({ type: 'workspace-service', workspaceId: ids[1]! });
      expect(((await h.call('GET', '/workspaces', { key: wsKey })).body as ListBody<WorkspaceBody>).data.map((w) => w.id)).toEqual([ids[1]]);
      expect((await h.call('GET', '/workspaces', { key: wsKey, query: { status: 'archived' } })).status).toBe(403);
      const loner = await h.user({ role: 'member' });
      expect((await h.call('GET', '/workspaces', { key: loner.key })).body).toEqual({ object: 'list', data: [], total: 0 });
    });

    test('get: by id or slug; members of the workspace only; another organisation is a 404', async () => {
      const { h } = await setup();
      const w = (await h.call('POST', '/workspaces', { body: { name: 'Ops' } })).body as WorkspaceBody;
      expect(((await h.call('GET', `/workspaces/${w.id}`)).body as WorkspaceBody).slug).toBe('ops');
      expect(((await h.call('GET', '/workspaces/ops')).body as WorkspaceBody).id).toBe(w.id);
      const member = await h.user({ role: 'member', workspaces: [[w.id, 'member']] });
      expect((await h.call('GET', '/workspaces/ops', { key: member.key })).status).toBe(200);
      expect((await h.call('GET', '/workspaces/default', { key: member.key })).status).toBe(404);
      const foreign = await h.workspace('foreign', crypto.randomUUID());
      expect((await h.call('GET', `/workspaces/${foreign}`)).status).toBe(404);
      expect((await h.call('GET', '/workspaces/foreign')).status).toBe(404);
    });

    test('update: workspace admins change details; status needs an organisation admin; the last active one stays', async () => {
      const { h, seen } = await setup();
      const w = (await h.call('POST', '/workspaces', { body: { name: 'Ops' } })).body as WorkspaceBody;
      const wsAdmin = await h.user({ role: 'member', workspaces: [[w.id, 'admin']] });
      const manager = await h.user({ role: 'member', workspaces: [[w.id, 'manager']] });
      const renamed = await h.call('PUT', '/workspaces/ops', { key: wsAdmin.key, body: { name: 'Operations', slug: 'operations', description: null, defaults: { metadata: { env: 'prod' } } } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Operations', slug: 'operations', defaults: { metadata: { env: 'prod' } } });
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace', action: 'update', workspaceId: w.id, before: { slug: 'ops' }, after: { slug: 'operations' } });
      expect((await h.call('PUT', `/workspaces/${w.id}`, { key: manager.key, body: { name: 'No' } })).status).toBe(403);
      expect((await h.call('PUT', `/workspaces/${w.id}`, { key: wsAdmin.key, body: { status: 'archived' } })).status).toBe(403);
      expect(refusal(await h.call('PUT', `/workspaces/${w.id}`, { body: { slug: 'default' } }))).toEqual({ status: 409, param: 'slug' });
      expect(refusal(await h.call('PUT', `/workspaces/${w.id}`, { body: {} }))).toEqual({ status: 400, param: 'body' });
      expect(refusal(await h.call('PUT', `/workspaces/${w.id}`, { body: { status: 'gone' } }))).toEqual({ status: 400, param: 'status' });
      expect(refusal(await h.call('PUT', `/workspaces/${w.id}`, { body: { name: '' } }))).toEqual({ status: 400, param: 'name' });

      const archived = await h.call('PUT', `/workspaces/${w.id}`, { body: { status: 'Archived' } });
      expect(archived.body).toMatchObject({ status: 'archived' });
      expect((archived.body as { archived_at: string | null }).archived_at).not.toBeNull();
      expect(seen).toEqual([{ name: 'workspace.archived', event: { organisationId: h.organisationId, workspaceId: w.id } }]);
      expect(h.audits.at(-1)).toMatchObject({ action: 'archive', before: { status: 'active' }, after: { status: 'archived' } });
      // Archived: its own admin no longer reaches it.
      expect((await h.call('GET', `/workspaces/${w.id}`, { key: wsAdmin.key })).status).toBe(404);
      // The default workspace is now the last active one.
      expect(refusal(await h.call('PUT', '/workspaces/default', { body: { status: 'archived' } }))).toEqual({ status: 400, param: 'status' });
      const restored = await h.call('PUT', `/workspaces/${w.id}`, { body: { status: 'active' } });
      expect(restored.body).toMatchObject({ status: 'active', archived_at: null });
      expect(h.audits.at(-1)).toMatchObject({ action: 'restore' });
      expect((await h.call('PUT', '/workspaces/default', { body: { status: 'archived' } })).status).toBe(200);
    });

    test('delete: organisation admins with workspaces.delete; memberships go, member.removed per member; last active refused', async () => {
      const { h, database, seen } = await setup();
      const w = (await h.call('POST', '/workspaces', { body: { name: 'Temp' } })).body as WorkspaceBody;
      const member = await h.user({ role: 'member', workspaces: [[w.id, 'admin'], [h.workspaceId, 'member']] });
      expect((await h.call('DELETE', `/workspaces/${w.id}`, { key: member.key })).status).toBe(403);
      const writeOnly = await h.key({ type: 'organisation-service', scopes: ['workspaces.write'] });
      expect((await h.call('DELETE', `/workspaces/${w.id}`, { key: writeOnly })).status).toBe(403);
      expect((await h.call('DELETE', '/workspaces/temp')).status).toBe(204);
      expect(await database.findOne(workspaces, 'id', w.id)).toBeUndefined();
      expect(await database.count(workspaceMembers, (c) => eq(c.user_id, member.id))).toBe(1);
      expect(seen).toEqual([
        { name: 'member.removed', event: { organisationId: h.organisationId, workspaceId: w.id, userId: member.id, via: 'direct' } },
        { name: 'workspace.archived', event: { organisationId: h.organisationId, workspaceId: w.id } },
      ]);
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace', action: 'delete', resourceId: w.id, before: { slug: 'temp', users: [{ user_id: member.id, role: 'admin' }] } });
      expect((await h.call('DELETE', `/workspaces/${w.id}`)).status).toBe(404);
      expect(refusal(await h.call('DELETE', '/workspaces/default'))).toEqual({ status: 400, param: null });
      expect(await database.count(workspaces)).toBe(1);
    });
  });
}
