// A workspace-user key carries its user's roles, so whoever makes one, or takes or changes its secret, must hold
// them: the keys of an owner are an owner's business, those of an organisation admin an organisation admin's. The
// one exception: an owner with no key at all may be given a first one by an organisation admin (the bootstrap key
// gives the first owner theirs).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { addUser, type Json, type KeysGateway, startKeysGateway } from './api-keys-support.ts';

for (const dialect of DIALECTS) {
  describe(`keys of owners and admins [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let k: KeysGateway;
    let ownerId: string;
    let adminId: string;
    let adminSecret: string;
    let ownerSecret: string;
    const userKey = (userId: string, key?: string) =>
      k.call<Json>('POST', '/api-keys', { name: 'k', type: 'workspace-user', workspace_id: k.workspaceId, user_id: userId, scopes: ['*'] }, key);

    beforeAll(async () => {
      const { url } = await t.fresh();
      k = await startKeysGateway(url);
      ownerId = await addUser(k.database, k.organisationId, 'owner@example.com', 'owner');
      adminId = await addUser(k.database, k.organisationId, 'admin@example.com', 'admin');
    });
    afterAll(() => k?.close());

    test("the owner's first key may come from an organisation admin, a second one not", async () => {
      const first = await userKey(ownerId);
      expect(first.status).toBe(201);
      ownerSecret = String(first.body.key);
      const second = await userKey(ownerId);
      expect(second.status).toBe(403);
      expect(JSON.stringify(second.body)).toContain("Only an owner may make an owner's key");
      // The owner makes more for themselves.
      expect((await userKey(ownerId, ownerSecret)).status).toBe(201);
    });

    test("an organisation admin may neither rotate, reveal, change nor delete an owner's key", async () => {
      const made = await userKey(adminId);
      expect(made.status).toBe(201);
      adminSecret = String(made.body.key);
      const listed = await k.call<{ data: Json[] }>('GET', `/api-keys?type=workspace-user`);
      const ownerKey = listed.body.data.find((key) => key.user_id === ownerId);
      expect(ownerKey).toBeDefined();
      const path = `/api-keys/${String(ownerKey?.id)}`;
      for (const [method, suffix, body] of [
        ['POST', '/rotate', {}],
        ['POST', '/reveal', {}],
        ['PUT', '', { name: 'taken over' }],
        ['DELETE', '', undefined],
      ] as const) {
        for (const key of [adminSecret, undefined]) {
          const answer = await k.call(method, path + suffix, body, key);
          expect(`${method} ${suffix} ${answer.status}`).toBe(`${method} ${suffix} 403`);
        }
      }
      // The owner may.
      expect((await k.call('PUT', path, { name: 'renamed by the owner' }, ownerSecret)).status).toBe(200);
    });

    test("an admin's keys need an organisation admin, not a workspace admin", async () => {
      const workspaceAdmin = await addUser(k.database, k.organisationId, 'wsadmin@example.com', 'member', [{ workspaceId: k.workspaceId, role: 'admin' }]);
      const own = await userKey(workspaceAdmin);
      expect(own.status).toBe(201);
      expect((await userKey(adminId, String(own.body.key))).status).toBe(403);
      expect((await userKey(adminId, adminSecret)).status).toBe(201); // an admin for an admin (here: themselves)
    });
  });
}
