// /users/invites on both dialects: the token shown once and stored as its SHA-256, accepted once (also when two
// accepts race), expired ones refused, the user made or reused, memberships granted, member.added via invite.
import { describe, expect, test } from 'bun:test';
import { hashInviteToken, userInvites, users, workspaceMembers } from '@gateway/admin-identity';
import type { AdminEventMap } from '@gateway/admin-kit';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { eq } from '@gateway/sdk';
import { identityHarness, refusal } from './identity-support.ts';

interface InviteBody {
  id: string;
  token?: string;
  email: string;
  role: string;
  status: string;
  expires_at: string;
  workspaces: { id: string; role: string }[];
  user_id: string | null;
}
interface Acceptance {
  object: string;
  user: { id: string; email: string; name: string | null; role: string; workspaces: { id: string; role: string }[] };
  api_keys: { id: string; key: string; workspace_id: string }[];
}

for (const dialect of DIALECTS) {
  describe(`identity /users/invites [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      const h = await identityHarness(database);
      const team = await h.workspace('team');
      const added: AdminEventMap['member.added'][] = [];
      h.events.on('member.added', (e) => {
        added.push(e);
        return { api_key: { id: `k-${e.workspaceId}`, key: `s-${e.userId}`, workspace_id: e.workspaceId, user_id: e.userId, pending_secret: false } };
      });
      return { h, database, team, added };
    }

    test('create → token once, stored hashed; accept (no API key) makes the user and memberships; a second accept is refused', async () => {
      const { h, database, team, added } = await setup();
      const res = await h.call('POST', '/users/invites', { body: { email: 'New@Example.com', role: 'member', workspaces: [{ id: 'team', role: 'Manager' }, { id: h.workspaceId }], expires_in: 3600 } });
      expect(res.status).toBe(201);
      const invite = res.body as InviteBody;
      expect(invite).toMatchObject({ object: 'invite', email: 'new@example.com', role: 'member', status: 'pending', workspaces: [{ id: team, role: 'manager' }, { id: h.workspaceId, role: 'member' }] });
      expect(invite.token).toMatch(/^inv-[A-Za-z0-9_-]{43}$/);
      expect(Math.abs(Date.parse(invite.expires_at) - Date.now() - 3600_000)).toBeLessThan(60_000);
      const stored = await database.findOne(userInvites, 'id', invite.id);
      expect(stored?.token_hash).toBe(hashInviteToken(invite.token!));
      expect(JSON.stringify(stored)).not.toContain(invite.token!);
      expect(JSON.stringify(h.audits.at(-1))).not.toContain(invite.token!);
      expect(JSON.stringify(h.audits.at(-1))).not.toContain(stored!.token_hash);
      // Never shown again.
      const again = (await h.call('GET', `/users/invites/${invite.id}`)).body as InviteBody;
      expect(again.token).toBeUndefined();
      expect(JSON.stringify(again)).not.toContain(stored!.token_hash);

      const accepted = await h.call('POST', '/users/invites/accept', { key: null, body: { token: invite.token, name: 'Newbie' } });
      expect(accepted.status).toBe(200);
      const body = accepted.body as Acceptance;
      expect(body.user).toMatchObject({ email: 'new@example.com', name: 'Newbie', role: 'member' });
      expect(body.user.workspaces.map((w) => [w.id, w.role]).sort()).toEqual([[h.workspaceId, 'member'], [team, 'manager']].sort());
      expect(body.api_keys.map((k) => k.workspace_id).sort()).toEqual([h.workspaceId, team].sort());
      // The answer goes to the invited person: the listeners may hand them their keys' secrets.
      expect(added.map((e) => [e.userId, e.via, e.callerUserId])).toEqual([[body.user.id, 'invite', body.user.id], [body.user.id, 'invite', body.user.id]]);
      const audit = h.audits.at(-1);
      expect(audit).toMatchObject({ organisationId: h.organisationId, actor: null, resource: 'invite', resourceId: invite.id, action: 'accept' });
      expect(JSON.stringify(audit)).not.toContain(invite.token!);
      expect(JSON.stringify(audit)).not.toContain('s-');
      expect(((await h.call('GET', `/users/invites/${invite.id}`)).body as InviteBody)).toMatchObject({ status: 'accepted', user_id: body.user.id });

      expect(refusal(await h.call('POST', '/users/invites/accept', { key: null, body: { token: invite.token } }))).toEqual({ status: 400, param: 'token' });
      expect(await database.count(users)).toBe(1);
      expect((await h.call('POST', '/users/invites/accept', { key: null, body: { token: 'inv-nothing' } })).status).toBe(404);
      expect(refusal(await h.call('POST', '/users/invites/accept', { key: null, body: {} }))).toEqual({ status: 400, param: 'token' });
      expect(refusal(await h.call('POST', '/users/invites/accept', { key: null, body: { token: 'x', extra: 1 } }))).toEqual({ status: 400, param: 'extra' });
    });

    test('two accepts of one token at once: one user, one set of memberships, one winner', async () => {
      const { h, database, team, added } = await setup();
      const invite = (await h.call('POST', '/users/invites', { body: { email: 'race@example.com', workspaces: [{ id: team }] } })).body as InviteBody;
      const answers = await Promise.all([1, 2, 3].map(() => h.call('POST', '/users/invites/accept', { key: null, body: { token: invite.token } })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
      expect(await database.count(users)).toBe(1);
      expect(await database.count(workspaceMembers)).toBe(1);
      expect(added).toHaveLength(1);
    });

    test('an expired invitation is refused and lists as expired; an existing user is reused, memberships keep the higher role', async () => {
      const { h, database, team } = await setup();
      const old = (await h.call('POST', '/users/invites', { body: { email: 'late@example.com' } })).body as InviteBody;
      await database.update(userInvites, { expires_at: Date.now() - 1 }, (c) => eq(c.id, old.id));
      expect(refusal(await h.call('POST', '/users/invites/accept', { key: null, body: { token: old.token } }))).toEqual({ status: 400, param: 'token' });
      expect(await database.count(users)).toBe(0);
      const expired = (await h.call('GET', '/users/invites', { query: { status: 'expired' } })).body as { data: InviteBody[]; total: number };
      expect([expired.total, expired.data[0]?.id]).toEqual([1, old.id]);
      expect(((await h.call('GET', '/users/invites', { query: { status: 'pending' } })).body as { total: number }).total).toBe(0);
      // Expired: a new invitation for the address is allowed.
      const existing = await h.user({ role: 'admin', email: 'late@example.com', workspaces: [[team, 'admin']] });
      const fresh = (await h.call('POST', '/users/invites', { body: { email: 'late@example.com', role: 'member', workspaces: [{ id: team, role: 'member' }, { id: 'default', role: 'manager' }] } })).body as InviteBody;
      // An existing user accepts with a key of their own; the token alone (which the inviter holds too) is refused.
      expect((await h.call('POST', '/users/invites/accept', { key: null, body: { token: fresh.token } })).status).toBe(403);
      expect((await h.call('POST', '/users/invites/accept', { body: { token: fresh.token } })).status).toBe(403);
      expect((await h.call('POST', '/users/invites/accept', { key: 'not-a-key', body: { token: fresh.token } })).status).toBe(401);
      const res = await h.call('POST', '/users/invites/accept', { key: existing.key, body: { token: fresh.token, name: 'Late' } });
      expect(res.status).toBe(200);
      const body = res.body as Acceptance;
      expect(body.user).toMatchObject({ id: existing.id, role: 'admin' });
      expect(body.user.workspaces.map((w) => [w.id, w.role]).sort()).toEqual([[h.workspaceId, 'manager'], [team, 'admin']].sort());
      expect(body.api_keys.map((k) => k.workspace_id)).toEqual([h.workspaceId]); // only the new membership
    });

    test('rules: admins only, owner invitations by owners, one pending invitation per address, 400s naming the field', async () => {
      const { h, database } = await setup();
      const member = await h.user({ role: 'member' });
      expect((await h.call('POST', '/users/invites', { key: member.key, body: { email: 'x@example.com' } })).status).toBe(403);
      expect((await h.call('GET', '/users/invites', { key: member.key })).status).toBe(403);
      const cases: [unknown, string | null][] = [
        [{}, 'email'],
        [{ email: 'bad' }, 'email'],
        [{ email: 'x@example.com', role: 'manager' }, 'role'],
        [{ email: 'x@example.com', workspaces: [{ id: 'nope' }] }, 'workspaces[0].id'],
        [{ email: 'x@example.com', workspaces: [{ id: 'default', role: 'boss' }] }, 'workspaces[0].role'],
        [{ email: 'x@example.com', expires_in: 10 }, 'expires_in'],
        [{ email: 'x@example.com', expires_in: 1.5 }, 'expires_in'],
        [{ email: 'x@example.com', expires_in: 999_999_999 }, 'expires_in'],
      ];
      for (const [body, param] of cases) expect(refusal(await h.call('POST', '/users/invites', { body }))).toEqual({ status: 400, param });
      expect(await database.count(userInvites)).toBe(0);
      // No owner yet: the organisation key may invite the first one; once there is an owner, only owners may.
      expect((await h.call('POST', '/users/invites', { body: { email: 'boss@example.com', role: 'owner' } })).status).toBe(201);
      await h.user({ role: 'owner' });
      expect((await h.call('POST', '/users/invites', { body: { email: 'boss2@example.com', role: 'owner' } })).status).toBe(403);
      expect(refusal(await h.call('POST', '/users/invites', { body: { email: 'BOSS@example.com' } }))).toEqual({ status: 409, param: 'email' });
      expect(refusal(await h.call('GET', '/users/invites', { query: { status: 'lost' } }))).toEqual({ status: 400, param: 'status' });
    });

    test('list and delete: a deleted invitation cannot be accepted; deleted workspaces are skipped on accept', async () => {
      const { h, database, team } = await setup();
      const a = (await h.call('POST', '/users/invites', { body: { email: 'a@example.com' } })).body as InviteBody;
      const b = (await h.call('POST', '/users/invites', { body: { email: 'b@example.com', workspaces: [{ id: team }, { id: 'default' }] } })).body as InviteBody;
      const listed = (await h.call('GET', '/users/invites', { query: { email: 'A@example.com' } })).body as { data: InviteBody[]; total: number };
      expect([listed.total, listed.data[0]?.id, listed.data[0]?.token]).toEqual([1, a.id, undefined]);
      expect(((await h.call('GET', '/users/invites')).body as { total: number }).total).toBe(2);
      expect((await h.call('DELETE', `/users/invites/${a.id}`)).status).toBe(204);
      expect(h.audits.at(-1)).toMatchObject({ resource: 'invite', action: 'delete', resourceId: a.id });
      expect((await h.call('GET', `/users/invites/${a.id}`)).status).toBe(404);
      expect((await h.call('DELETE', `/users/invites/${a.id}`)).status).toBe(404);
      expect((await h.call('POST', '/users/invites/accept', { key: null, body: { token: a.token } })).status).toBe(404);

      expect((await h.call('DELETE', `/workspaces/${team}`)).status).toBe(204);
      const res = await h.call('POST', '/users/invites/accept', { key: null, body: { token: b.token } });
      expect((res.body as Acceptance).user.workspaces.map((w) => w.id)).toEqual([h.workspaceId]);
      expect(await database.count(workspaceMembers)).toBe(1);
    });
  });
}
