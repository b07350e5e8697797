// Key secrets go only to the key's own user (issue #13, item 1; docs/security.md "Key secrets"). Each test is an
// attack by someone inside the organisation — a workspace admin, an organisation admin — trying to end up holding
// a secret of a key of a user whose roles they do not hold: through the default key auto-created for a member they
// add, a workspace they create with users, an invitation they accept themselves, or a key they mint, rotate or
// pick up. SQLite and MariaDB, the real identity, settings and api-keys plugins in process.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { workspaceMembers } from '@gateway/admin-identity';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { and, eq } from '@gateway/sdk';
import { addUser, addWorkspace, type Answer, authenticates, type Json, type KeysGateway, startKeysGateway } from '../admin/api-keys-support.ts';

interface Person {
  id: string;
  email: string;
  /** A workspace-user key of theirs with every scope, and its id. */
  key: string;
  keyId: string;
}

/** Every string under a property named `key`, at any depth: the secrets an answer hands out. */
function secretsIn(body: unknown): string[] {
  if (Array.isArray(body)) return body.flatMap(secretsIn);
  if (body === null || typeof body !== 'object') return [];
  return Object.entries(body).flatMap(([name, value]) => (name === 'key' && typeof value === 'string' ? [value] : secretsIn(value)));
}

for (const dialect of DIALECTS) {
  describe(`key secrets go only to their user [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let k: KeysGateway;
    let n = 0;

    beforeAll(async () => {
      k = await startKeysGateway(t.url);
    });
    afterAll(() => k?.close());

    /** A call with `key` (the bootstrap organisation key when undefined) or, with null, none at all. */
    async function call<T = Json>(method: string, path: string, body: unknown, key: string | null | undefined): Promise<Answer<T>> {
      if (key !== null) return k.call<T>(method, path, body, key);
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      const response = await k.gateway.handle(new Request(`http://gateway.test/v1${path}`, { method, headers, body: JSON.stringify(body) }));
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    }

    const workspace = (name: string) => addWorkspace(k.database, k.organisationId, `${name}-${dialect}-${++n}`);

    /** A user with memberships and a key of theirs (in `keyWorkspace`), made by the bootstrap organisation key. */
    async function person(role: 'owner' | 'admin' | 'member', memberships: { workspaceId: string; role: 'admin' | 'manager' | 'member' }[] = [], keyWorkspace = memberships[0]?.workspaceId ?? k.workspaceId) {
      const email = `${role}-${dialect}-${++n}@example.test`;
      const id = await addUser(k.database, k.organisationId, email, role, memberships);
      const made = await k.call<Json>('POST', '/api-keys', { name: 'own', type: 'workspace-user', workspace_id: keyWorkspace, user_id: id, scopes: ['*'] });
      expect(made.status).toBe(201);
      return { id, email, key: String(made.body.key), keyId: String(made.body.id) } satisfies Person;
    }

    /** A second key of the victim, made by the victim: the one the attack rotates with a stolen key. */
    async function otherKeyOf(victim: Person): Promise<string> {
      const made = await k.call<Json>('POST', '/api-keys', { name: 'other', type: 'workspace-user', workspace_id: k.workspaceId, user_id: victim.id, scopes: ['*'] }, victim.key);
      expect(made.status).toBe(201);
      return String(made.body.id);
    }

    /** The attack's second step, for each secret the first one leaked: rotate the victim's other key with it. */
    async function rotateWith(leaked: string[], victimKeyId: string): Promise<string[]> {
      const stolen: string[] = [];
      for (const secret of leaked) stolen.push(...secretsIn((await call('POST', `/api-keys/${victimKeyId}/rotate`, {}, secret)).body));
      return stolen;
    }

    async function withOrganisationAutoCreate(run: () => Promise<void>): Promise<void> {
      expect((await k.call('PUT', '/settings/api-keys', { user_api_key_auto_create: true })).status).toBe(200);
      try {
        await run();
      } finally {
        await k.call('PUT', '/settings/api-keys', { user_api_key_auto_create: null });
      }
    }

    for (const victimRole of ['owner', 'admin'] as const)
      test(`a workspace admin who switches on auto-create and adds an organisation ${victimRole} gets no key of theirs`, async () => {
        const ws = await workspace('ws-admin-attack');
        const attacker = await person('member', [{ workspaceId: ws, role: 'admin' }]);
        const victim = await person(victimRole);
        const victimOther = await otherKeyOf(victim);

        // The workspace setting stays a workspace admin's: what it creates is its members' business (below).
        expect((await call('PUT', `/workspaces/${ws}/settings/api-keys`, { user_api_key_auto_create: true }, attacker.key)).status).toBe(200);
        const added = await call('POST', `/workspaces/${ws}/users`, { user_id: victim.id, role: 'member' }, attacker.key);
        const leaked = secretsIn(added.body);
        const stolen = await rotateWith(leaked, victimOther);

        expect({ status: added.status, leaked, stolen }).toEqual({ status: 403, leaked: [], stolen: [] });
        expect(await k.database.count(workspaceMembers, (c) => and(eq(c.workspace_id, ws), eq(c.user_id, victim.id)))).toBe(0);
      });

    test("a workspace admin who adds a member who is admin elsewhere: the member's default key waits for the member alone", async () => {
      const ws = await workspace('ws-pending');
      const elsewhere = await workspace('elsewhere');
      const attacker = await person('member', [{ workspaceId: ws, role: 'admin' }]);
      const victim = await person('member', [{ workspaceId: elsewhere, role: 'admin' }]);
      expect((await call('PUT', `/workspaces/${ws}/settings/api-keys`, { user_api_key_auto_create: true }, attacker.key)).status).toBe(200);

      const added = await call<{ api_keys: Json[] }>('POST', `/workspaces/${ws}/users`, { user_id: victim.id }, attacker.key);
      expect(added.status).toBe(201);
      const leaked = secretsIn(added.body);
      const stolen = await rotateWith(leaked, victim.keyId);
      expect({ leaked, stolen }).toEqual({ leaked: [], stolen: [] });
      const issued = added.body.api_keys[0];
      expect(issued).toMatchObject({ workspace_id: ws, user_id: victim.id, pending_secret: true });

      // The attacker tries to pick the waiting secret up, then to rotate the key: refused, nothing shown.
      for (const path of [`/api-keys/${String(issued?.id)}/reveal`, `/api-keys/${String(issued?.id)}/rotate`]) {
        const tried = await call('POST', path, {}, attacker.key);
        expect({ path, status: tried.status, secrets: secretsIn(tried.body) }).toEqual({ path, status: 403, secrets: [] });
      }

      // The member picks it up on their own call, once.
      const picked = await call<Json>('POST', `/api-keys/${String(issued?.id)}/reveal`, {}, victim.key);
      expect(picked.status).toBe(200);
      expect(await authenticates(k, String(picked.body.key))).toBe(true);
      expect((await call('POST', `/api-keys/${String(issued?.id)}/reveal`, {}, victim.key)).status).toBe(404);
    });

    test('an organisation admin who creates a workspace with an owner in users gets no key of the owner', async () => {
      const attacker = await person('admin');
      const owner = await person('owner');
      const ownerOther = await otherKeyOf(owner);
      const member = await person('member', [{ workspaceId: k.workspaceId, role: 'member' }]);
      await withOrganisationAutoCreate(async () => {
        const created = await call('POST', '/workspaces', { name: `grab-${dialect}-${++n}`, users: [{ id: owner.id, role: 'admin' }] }, attacker.key);
        const leaked = secretsIn(created.body);
        const stolen = await rotateWith(leaked, ownerOther);
        expect({ status: created.status, leaked, stolen }).toEqual({ status: 403, leaked: [], stolen: [] });

        // With a plain member the workspace is made, and the member's key waits for them.
        const withMember = await call<{ api_keys: Json[] }>('POST', '/workspaces', { name: `team-${dialect}-${++n}`, users: [{ id: member.id }] }, attacker.key);
        expect(withMember.status).toBe(201);
        expect(secretsIn(withMember.body)).toEqual([]);
        expect(withMember.body.api_keys).toMatchObject([{ user_id: member.id, pending_secret: true }]);
      });
    });

    test("an invitation to an existing owner's address, accepted with the inviter's token, is not bound to the owner", async () => {
      const ws = await workspace('invite-grab');
      const attacker = await person('admin');
      const owner = await person('owner');
      const ownerOther = await otherKeyOf(owner);
      await withOrganisationAutoCreate(async () => {
        const invite = await call<Json>('POST', '/users/invites', { email: owner.email, workspaces: [{ id: ws, role: 'member' }] }, attacker.key);
        expect(invite.status).toBe(201);
        const token = String(invite.body.token);

        // Accepted by the attacker: without a key (the public route), and with their own.
        for (const key of [null, attacker.key]) {
          const accepted = await call('POST', '/users/invites/accept', { token }, key);
          const leaked = secretsIn(accepted.body);
          const stolen = await rotateWith(leaked, ownerOther);
          expect({ status: accepted.status, leaked, stolen }).toEqual({ status: 403, leaked: [], stolen: [] });
        }
        expect(await k.database.count(workspaceMembers, (c) => and(eq(c.workspace_id, ws), eq(c.user_id, owner.id)))).toBe(0);

        // The owner accepts it with their own key, and is the one shown the new key.
        const own = await call<{ api_keys: Json[] }>('POST', '/users/invites/accept', { token }, owner.key);
        expect(own.status).toBe(200);
        const [secret] = secretsIn(own.body);
        expect(await authenticates(k, String(secret))).toBe(true);
      });
    });

    test('a workspace admin may not mint, rotate or pick up a key of a member who is admin in another workspace', async () => {
      const ws = await workspace('shared');
      const elsewhere = await workspace('theirs');
      const attacker = await person('member', [{ workspaceId: ws, role: 'admin' }]);
      const victim = await person('member', [{ workspaceId: ws, role: 'member' }, { workspaceId: elsewhere, role: 'admin' }]);
      // A key of the victim in the attacker's workspace, rotated by its policy: its new secret waits to be picked up.
      const weekly = await k.call<Json>('POST', '/api-keys', {
        name: 'weekly',
        type: 'workspace-user',
        workspace_id: ws,
        user_id: victim.id,
        scopes: ['completions.write'],
        rotation_policy: { rotation_period: 'weekly' },
      });
      expect(weekly.status).toBe(201);
      k.clock.set(Date.parse(String(weekly.body.next_rotation_at)) + 1000);
      try {
        expect((await k.rotation.tick()).rotated).toContain(String(weekly.body.id));
      } finally {
        k.clock.set(Date.now());
      }

      const attempts = {
        mint: await call('POST', '/api-keys', { name: 'mine now', type: 'workspace-user', workspace_id: ws, user_id: victim.id, scopes: ['*'] }, attacker.key),
        rotate: await call('POST', `/api-keys/${String(weekly.body.id)}/rotate`, {}, attacker.key),
        reveal: await call('POST', `/api-keys/${String(weekly.body.id)}/reveal`, {}, attacker.key),
      };
      const outcome = Object.fromEntries(Object.entries(attempts).map(([name, a]) => [name, { status: a.status, secrets: secretsIn(a.body) }]));
      expect(outcome).toEqual({ mint: { status: 403, secrets: [] }, rotate: { status: 403, secrets: [] }, reveal: { status: 403, secrets: [] } });

      // The victim's own pickup works.
      expect((await call('POST', `/api-keys/${String(weekly.body.id)}/reveal`, {}, victim.key)).status).toBe(200);
    });
  });
}
