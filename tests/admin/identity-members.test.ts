// /workspaces/:workspaceId/users on both dialects: admins manage every member, managers manage members and managers
// without granting or touching admin, plain members only read; events, keys handed back, all-or-nothing adds.
import { describe, expect, test } from 'bun:test';
import { workspaceMembers } from '@gateway/admin-identity';
import type { AdminEventMap } from '@gateway/admin-kit';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { and, eq } from '@gateway/sdk';
import { identityHarness, refusal } from './identity-support.ts';

interface Member {
  id: string;
  user_id: string;
  email: string;
  role: string;
  organisation_role: string;
}
interface Members {
  object: 'list';
  data: Member[];
  total: number;
  api_keys?: unknown[];
}

for (const dialect of DIALECTS) {
  describe(`identity /workspaces/:id/users [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      const h = await identityHarness(database);
      const ws = await h.workspace('team');
      const added: AdminEventMap['member.added'][] = [];
      const removed: AdminEventMap['member.removed'][] = [];
      h.events.on('member.added', (e) => {
        added.push(e);
        return { api_key: { id: `k-${e.userId}`, key: `s-${e.userId}`, workspace_id: e.workspaceId, user_id: e.userId, pending_secret: false } };
      });
      h.events.on('member.removed', (e) => void removed.push(e));
      const role = async (userId: string) =>
        (await database.select(workspaceMembers, { where: (c) => and(eq(c.workspace_id, ws), eq(c.user_id, userId)) }))[0]?.role ?? null;
      return { h, database, ws, added, removed, role };
    }

    test('add by list or by user_id, role case-insensitive; member.added via direct; keys handed back; audit', async () => {
      const { h, ws, added, role } = await setup();
      const [a, b, c] = [await h.user({}), await h.user({}), await h.user({})];
      const res = await h.call('POST', `/workspaces/${ws}/users`, { body: { users: [{ id: a.id, role: 'Admin' }, { id: b.id, role: 'manager' }] } });
      expect(res.status).toBe(201);
      const body = res.body as Members;
      expect(body.data.map((m) => [m.user_id, m.role])).toEqual([[a.id, 'admin'], [b.id, 'manager']]);
      expect(body.api_keys).toEqual([
        { id: `k-${a.id}`, key: `s-${a.id}`, workspace_id: ws, user_id: a.id, pending_secret: false },
        { id: `k-${b.id}`, key: `s-${b.id}`, workspace_id: ws, user_id: b.id, pending_secret: false },
      ]);
      expect(added).toEqual([
        { organisationId: h.organisationId, workspaceId: ws, userId: a.id, role: 'admin', via: 'direct', callerUserId: null },
        { organisationId: h.organisationId, workspaceId: ws, userId: b.id, role: 'manager', via: 'direct', callerUserId: null },
      ]);
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace_user', action: 'create', workspaceId: ws, status: 201 });
      expect(JSON.stringify(h.audits.at(-1))).not.toContain('s-');
      // By slug, one user, default role member.
      expect((await h.call('POST', '/workspaces/team/users', { body: { user_id: c.id } })).status).toBe(201);
      expect(await role(c.id)).toBe('member');
      const list = (await h.call('GET', '/workspaces/team/users')).body as Members;
      expect([list.total, list.data.map((m) => m.role).sort()]).toEqual([3, ['admin', 'manager', 'member']]);
      const admins = (await h.call('GET', '/workspaces/team/users', { query: { role: 'admin', page_size: '1' } })).body as Members;
      expect([admins.total, admins.data[0]?.user_id]).toEqual([1, a.id]);
    });

    test('bad input names the field; an existing member is a 409 and nothing of the request is kept', async () => {
      const { h, database, ws, added } = await setup();
      const [a, b] = [await h.user({}), await h.user({})];
      const cases: [unknown, number, string | null][] = [
        [{}, 400, 'users'],
        [{ users: [] }, 400, 'users'],
        [{ users: [{ id: a.id }], user_id: a.id }, 400, 'users'],
        [{ users: [{ id: a.id }], role: 'member' }, 400, 'role'],
        [{ user_id: a.id, role: 'owner' }, 400, 'role'],
        [{ users: [{ id: a.id, role: 'boss' }] }, 400, 'users[0].role'],
        [{ users: [{ id: a.id }, { id: 'nobody' }] }, 400, 'users[1].id'],
        [{ users: [{ id: a.id }, { id: a.id }] }, 400, 'users[1].id'],
        [{ user_id: 'nobody' }, 400, 'user_id'],
        [{ users: [{ id: a.id, extra: 1 }] }, 400, 'users[0].extra'],
      ];
      for (const [body, status, param] of cases) expect(refusal(await h.call('POST', `/workspaces/${ws}/users`, { body }))).toEqual({ status, param });
      expect(await database.count(workspaceMembers)).toBe(0);

      await h.call('POST', `/workspaces/${ws}/users`, { body: { user_id: b.id } });
      added.length = 0;
      // a would be added first, then b clashes: the transaction keeps neither.
      expect(refusal(await h.call('POST', `/workspaces/${ws}/users`, { body: { users: [{ id: a.id }, { id: b.id }] } }))).toEqual({ status: 409, param: 'users[1].id' });
      expect(await database.count(workspaceMembers, (c) => eq(c.user_id, a.id))).toBe(0);
      expect(added).toEqual([]);
      // A user of another organisation is no user here.
      expect((await h.call('POST', `/workspaces/${ws}/users`, { body: { user_id: crypto.randomUUID() } })).status).toBe(400);
      expect((await h.call('POST', `/workspaces/nope/users`, { body: { user_id: a.id } })).status).toBe(404);
    });

    test('managers manage members and managers, not admins; members only read; service keys of other workspaces see nothing', async () => {
      const { h, ws, role } = await setup();
      const wsAdmin = await h.user({ workspaces: [[ws, 'admin']] });
      const manager = await h.user({ workspaces: [[ws, 'manager']] });
      const member = await h.user({ workspaces: [[ws, 'member']] });
      const target = await h.user({});
      const as = (key: string, body: unknown) => h.call('POST', `/workspaces/${ws}/users`, { key, body });

      expect((await as(member.key, { user_id: target.id })).status).toBe(403);
      expect((await h.call('GET', `/workspaces/${ws}/users`, { key: member.key })).status).toBe(200);
      expect((await as(manager.key, { user_id: target.id, role: 'admin' })).status).toBe(403);
      expect((await as(manager.key, { user_id: target.id, role: 'manager' })).status).toBe(201);
      expect((await h.call('PUT', `/workspaces/${ws}/users/${target.id}`, { key: manager.key, body: { role: 'admin' } })).status).toBe(403);
      expect((await h.call('PUT', `/workspaces/${ws}/users/${wsAdmin.id}`, { key: manager.key, body: { role: 'member' } })).status).toBe(403);
      expect((await h.call('DELETE', `/workspaces/${ws}/users/${wsAdmin.id}`, { key: manager.key })).status).toBe(403);
      expect(await role(wsAdmin.id)).toBe('admin');
      expect((await h.call('PUT', `/workspaces/${ws}/users/${target.id}`, { key: manager.key, body: { role: 'member' } })).status).toBe(200);
      expect((await h.call('PUT', `/workspaces/${ws}/users/${target.id}`, { key: wsAdmin.key, body: { role: 'ADMIN' } })).body).toMatchObject({ role: 'admin', user_id: target.id });
      expect(await role(target.id)).toBe('admin');
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace_user', action: 'update', before: { role: 'member' }, after: { role: 'admin' } });

      const ownKey = await h.key({ type: 'workspace-service', workspaceId: ws });
      const otherKey = await h.key({ type: 'workspace-service' });
      expect((await h.call('GET', `/workspaces/${ws}/users`, { key: ownKey })).status).toBe(200);
      expect((await h.call('GET', `/workspaces/${ws}/users`, { key: otherKey })).status).toBe(404);
      const readOnly = await h.key({ type: 'workspace-service', workspaceId: ws, scopes: ['workspace_users.read'] });
      expect((await h.call('DELETE', `/workspaces/${ws}/users/${member.id}`, { key: readOnly })).status).toBe(403);
    });

    test('a failing listener is logged; the change stands and the answer carries what the other listeners gave', async () => {
      const { h, ws, role } = await setup();
      h.events.on('member.added', () => {
        throw new Error('listener broke');
      });
      const u = await h.user({});
      const res = await h.call('POST', `/workspaces/${ws}/users`, { body: { user_id: u.id } });
      expect(res.status).toBe(201);
      expect((res.body as Members).api_keys).toEqual([{ id: `k-${u.id}`, key: `s-${u.id}`, workspace_id: ws, user_id: u.id, pending_secret: false }]);
      expect(await role(u.id)).toBe('member');
      expect(h.plugin.logger.records.some((r) => r.level === 'error' && JSON.stringify(r.obj).includes('member.added'))).toBe(true);
    });

    test('update and remove: 400 naming role, 404 for a non-member, member.removed on removal', async () => {
      const { h, ws, removed, role } = await setup();
      const m = await h.user({ workspaces: [[ws, 'member']] });
      const outsider = await h.user({});
      expect(refusal(await h.call('PUT', `/workspaces/${ws}/users/${m.id}`, { body: { role: 'owner' } }))).toEqual({ status: 400, param: 'role' });
      expect(refusal(await h.call('PUT', `/workspaces/${ws}/users/${m.id}`, { body: {} }))).toEqual({ status: 400, param: 'role' });
      expect((await h.call('PUT', `/workspaces/${ws}/users/${outsider.id}`, { body: { role: 'member' } })).status).toBe(404);
      expect((await h.call('DELETE', `/workspaces/${ws}/users/${outsider.id}`)).status).toBe(404);
      expect((await h.call('DELETE', `/workspaces/team/users/${m.id}`)).status).toBe(204);
      expect(await role(m.id)).toBeNull();
      expect(removed).toEqual([{ organisationId: h.organisationId, workspaceId: ws, userId: m.id, via: 'direct' }]);
      expect(h.audits.at(-1)).toMatchObject({ resource: 'workspace_user', action: 'delete', resourceId: m.id, workspaceId: ws });
      expect((await h.call('DELETE', `/workspaces/${ws}/users/${m.id}`)).status).toBe(404);
    });
  });
}
