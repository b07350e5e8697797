// /users on both dialects: organisation owners and admins manage people; only owners make, change or remove owners
// (except the first owner); the last owner stays; a removed user's keys stop working at once.
import { describe, expect, test } from 'bun:test';
import { users, workspaceMembers } from '@gateway/admin-identity';
import type { AdminEventMap } from '@gateway/admin-kit';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { eq } from '@gateway/sdk';
import { identityHarness, refusal } from './identity-support.ts';

interface UserBody {
  id: string;
  email: string;
  name: string | null;
  role: string;
  workspaces: { id: string; slug: string; name: string; status: string; role: string }[];
  api_keys?: unknown[];
}
interface Users {
  data: UserBody[];
  total: number;
}

for (const dialect of DIALECTS) {
  describe(`identity /users [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      const h = await identityHarness(database);
      const added: AdminEventMap['member.added'][] = [];
      const removed: AdminEventMap['member.removed'][] = [];
      h.events.on('member.added', (e) => {
        added.push(e);
        return { api_key: { id: `k-${e.workspaceId}`, key: `s-${e.userId}`, workspace_id: e.workspaceId, user_id: e.userId, pending_secret: false } };
      });
      h.events.on('member.removed', (e) => void removed.push(e));
      return { h, database, added, removed };
    }

    test('create: e-mail lower-cased and unique, workspaces by id or slug, member.added via direct, keys handed back', async () => {
      const { h, added } = await setup();
      const team = await h.workspace('team');
      const res = await h.call('POST', '/users', {
        body: { email: '  Ada@Example.COM ', name: 'Ada', role: 'Admin', workspaces: [{ id: 'team', role: 'manager' }, { id: h.workspaceId }] },
      });
      expect(res.status).toBe(201);
      const ada = res.body as UserBody;
      expect(ada).toMatchObject({ object: 'user', email: 'ada@example.com', name: 'Ada', role: 'admin' });
      expect(ada.workspaces.map((w) => [w.slug, w.role]).sort()).toEqual([['default', 'member'], ['team', 'manager']]);
      expect(ada.api_keys).toHaveLength(2);
      expect(added.map((e) => [e.workspaceId, e.role, e.via]).sort()).toEqual([[h.workspaceId, 'member', 'direct'], [team, 'manager', 'direct']].sort());
      expect(h.audits.at(-1)).toMatchObject({ resource: 'user', action: 'create', resourceId: ada.id });
      expect(JSON.stringify(h.audits.at(-1))).not.toContain('s-');
      expect(refusal(await h.call('POST', '/users', { body: { email: 'ADA@example.com' } }))).toEqual({ status: 409, param: 'email' });
      expect(((await h.call('GET', `/users/${ada.id}`)).body as UserBody).email).toBe('ada@example.com');
    });

    test('create: every rule is a 400 naming the field, nothing written', async () => {
      const { h, database } = await setup();
      const cases: [unknown, string | null][] = [
        [{}, 'email'],
        [{ email: 'not-an-address' }, 'email'],
        [{ email: 'a@b' }, 'email'],
        [{ email: 'a@b.co', role: 'boss' }, 'role'],
        [{ email: 'a@b.co', role: 'manager' }, 'role'],
        [{ email: 'a@b.co', name: '  ' }, 'name'],
        [{ email: 'a@b.co', workspaces: [{ id: 'nope' }] }, 'workspaces[0].id'],
        [{ email: 'a@b.co', workspaces: [{ id: 'default', role: 'owner' }] }, 'workspaces[0].role'],
        [{ email: 'a@b.co', workspaces: [{ id: 'default' }, { id: h.workspaceId }] }, 'workspaces[1].id'],
        [{ email: 'a@b.co', surname: 'x' }, 'surname'],
      ];
      for (const [body, param] of cases) expect(refusal(await h.call('POST', '/users', { body }))).toEqual({ status: 400, param });
      expect(await database.count(users)).toBe(0);
      expect(await database.count(workspaceMembers)).toBe(0);
    });

    test('owners: the first owner may be made by an admin; afterwards only owners make, change or remove owners; the last owner stays', async () => {
      const { h } = await setup();
      const first = (await h.call('POST', '/users', { body: { email: 'owner@example.com', role: 'owner' } })).body as UserBody;
      expect(first.role).toBe('owner');
      expect((await h.call('POST', '/users', { body: { email: 'second@example.com', role: 'owner' } })).status).toBe(403);
      const admin = await h.user({ role: 'admin' });
      const owner = await h.key({ type: 'workspace-user', userId: first.id });
      expect((await h.call('PUT', `/users/${admin.id}`, { key: admin.key, body: { role: 'owner' } })).status).toBe(403);
      expect((await h.call('PUT', `/users/${first.id}`, { body: { role: 'admin' } })).status).toBe(403); // an organisation key is an admin
      expect((await h.call('DELETE', `/users/${first.id}`, { key: admin.key })).status).toBe(403);
      expect(refusal(await h.call('PUT', `/users/${first.id}`, { key: owner, body: { role: 'admin' } }))).toEqual({ status: 400, param: 'role' });
      expect((await h.call('DELETE', `/users/${first.id}`, { key: owner })).status).toBe(400);
      const second = (await h.call('POST', '/users', { key: owner, body: { email: 'second@example.com', role: 'owner' } })).body as UserBody;
      expect(second.role).toBe('owner');
      // Two owners: one may step down.
      expect(((await h.call('PUT', `/users/${first.id}`, { key: owner, body: { role: 'member' } })).body as UserBody).role).toBe('member');
      expect(h.audits.at(-1)).toMatchObject({ resource: 'user', action: 'update', before: { role: 'owner' }, after: { role: 'member' } });
    });

    test('list (admins only) with email and role filters; get: admins or the user themselves; rename yourself', async () => {
      const { h } = await setup();
      const admin = await h.user({ role: 'admin', email: 'boss@example.com' });
      const member = await h.user({ role: 'member', email: 'worker@example.com', workspaces: [[h.workspaceId, 'manager']] });
      const other = await h.user({ role: 'member' });
      const all = (await h.call('GET', '/users')).body as Users;
      expect(all.total).toBe(3);
      expect(all.data.find((u) => u.id === member.id)?.workspaces).toEqual([{ id: h.workspaceId, slug: 'default', name: 'Default workspace', status: 'active', role: 'manager' }]);
      expect(((await h.call('GET', '/users', { key: admin.key, query: { email: 'WORKER@example.com' } })).body as Users).data.map((u) => u.id)).toEqual([member.id]);
      expect(((await h.call('GET', '/users', { query: { role: 'admin,owner' } })).body as Users).data.map((u) => u.id)).toEqual([admin.id]);
      expect(refusal(await h.call('GET', '/users', { query: { role: 'boss' } }))).toEqual({ status: 400, param: 'role' });
      expect(refusal(await h.call('GET', '/users', { query: { email: 'nope' } }))).toEqual({ status: 400, param: 'email' });
      expect(((await h.call('GET', '/users', { query: { page_size: '2', current_page: '1' } })).body as Users).data).toHaveLength(1);
      expect((await h.call('GET', '/users', { key: member.key })).status).toBe(403);
      expect((await h.call('GET', '/users', { key: await h.key({ type: 'workspace-service' }) })).status).toBe(403);

      expect((await h.call('GET', `/users/${member.id}`, { key: member.key })).status).toBe(200);
      expect((await h.call('GET', `/users/${other.id}`, { key: member.key })).status).toBe(403);
      expect((await h.call('GET', `/users/${crypto.randomUUID()}`)).status).toBe(404);
      expect(((await h.call('PUT', `/users/${member.id}`, { key: member.key, body: { name: 'Wendy' } })).body as UserBody).name).toBe('Wendy');
      expect((await h.call('PUT', `/users/${member.id}`, { key: member.key, body: { role: 'admin' } })).status).toBe(403);
      expect((await h.call('PUT', `/users/${other.id}`, { key: member.key, body: { name: 'X' } })).status).toBe(403);
      expect(refusal(await h.call('PUT', `/users/${other.id}`, { body: {} }))).toEqual({ status: 400, param: 'body' });
      expect(refusal(await h.call('PUT', `/users/${other.id}`, { body: { role: 'chief' } }))).toEqual({ status: 400, param: 'role' });
      expect(((await h.call('PUT', `/users/${other.id}`, { key: admin.key, body: { role: 'ADMIN', name: null } })).body as UserBody).role).toBe('admin');
    });

    test('remove: memberships go, member.removed for the organisation, and the user key is refused from the next call', async () => {
      const { h, database, removed } = await setup();
      const team = await h.workspace('team');
      const u = await h.user({ role: 'admin', workspaces: [[team, 'admin'], [h.workspaceId, 'member']] });
      expect((await h.call('GET', '/workspaces', { key: u.key })).status).toBe(200);
      expect((await h.call('DELETE', `/users/${u.id}`)).status).toBe(204);
      expect(await database.count(workspaceMembers, (c) => eq(c.user_id, u.id))).toBe(0);
      expect(await database.count(users, (c) => eq(c.id, u.id))).toBe(0);
      expect(removed).toEqual([{ organisationId: h.organisationId, workspaceId: null, userId: u.id, via: 'direct' }]);
      expect(h.audits.at(-1)).toMatchObject({ resource: 'user', action: 'delete', resourceId: u.id, before: { email: expect.any(String) } });
      // The key itself is still active (its revocation is the api-keys plugin's business): the authorizer refuses it.
      expect((await h.call('GET', '/workspaces', { key: u.key })).status).toBe(401);
      expect((await h.call('DELETE', `/users/${u.id}`)).status).toBe(404);
    });
  });
}
