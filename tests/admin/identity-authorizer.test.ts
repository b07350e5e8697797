// The Principal every administration route relies on: organisation and workspace roles per key type, read from the
// users and workspace_members tables, on both dialects.
import { describe, expect, test } from 'bun:test';
import { findWorkspace, IdentityAuthorizer, users, workspaces } from '@gateway/admin-identity';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type Caller, eq, GatewayError } from '@gateway/sdk';
import { identityHarness } from './identity-support.ts';

for (const dialect of DIALECTS) {
  describe(`identity authorizer [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      const h = await identityHarness(database);
      const other = await h.workspace('other');
      const archived = await h.workspace('old');
      await database.update(workspaces, { status: 'archived' }, (c) => eq(c.id, archived));
      // A second organisation and its workspace.
      const foreignOrg = crypto.randomUUID();
      const foreign = await h.workspace('foreign', foreignOrg);
      const authorizer = new IdentityAuthorizer(database);
      const caller = (c: Partial<Caller>): Caller => ({
        apiKeyId: 'k',
        organisationId: h.organisationId,
        workspaceId: h.workspaceId,
        scopes: ['*'],
        keyType: 'workspace-user',
        userId: null,
        ...c,
      });
      return { h, database, other, archived, foreign, authorizer, caller };
    }

    test('organisation-service key: organisation admin, admin of every workspace of its organisation only', async () => {
      const { h, other, archived, foreign, authorizer, caller } = await setup();
      const p = await authorizer.principal(caller({ keyType: 'organisation-service' }));
      expect([p.orgRole, p.isOrgAdmin]).toEqual(['admin', true]);
      expect(await p.workspaceRole(h.workspaceId)).toBe('admin');
      expect(await p.workspaceRole(other)).toBe('admin');
      expect(await p.workspaceRole('other')).toBe('admin'); // by slug
      expect(await p.workspaceRole(archived)).toBe('admin');
      expect(await p.workspaceRole(foreign)).toBeNull();
      expect(await p.workspaceRole('foreign')).toBeNull();
      expect(await p.workspaceRole(crypto.randomUUID())).toBeNull();
    });

    test('workspace-service key: no organisation role, admin of its own active workspace only', async () => {
      const { h, database, other, foreign, authorizer, caller } = await setup();
      const p = await authorizer.principal(caller({ keyType: 'workspace-service', workspaceId: other }));
      expect([p.orgRole, p.isOrgAdmin]).toEqual([null, false]);
      expect(await p.workspaceRole(other)).toBe('admin');
      expect(await p.workspaceRole('other')).toBe('admin');
      expect(await p.workspaceRole(h.workspaceId)).toBeNull();
      expect(await p.workspaceRole(foreign)).toBeNull();
      // A key of another organisation's workspace is nothing here, even with that workspace's id.
      const stranger = await authorizer.principal(caller({ keyType: 'workspace-service', organisationId: crypto.randomUUID(), workspaceId: other }));
      expect(await stranger.workspaceRole(other)).toBeNull();
      // Archived: the key's own workspace gives no role any more.
      await database.update(workspaces, { status: 'archived' }, (c) => eq(c.id, other));
      const again = await authorizer.principal(caller({ keyType: 'workspace-service', workspaceId: other }));
      expect(await again.workspaceRole(other)).toBeNull();
    });

    test('workspace-user key: the user organisation role; owners and admins are admin everywhere, members have their memberships', async () => {
      const { h, other, archived, foreign, authorizer, caller } = await setup();
      for (const role of ['owner', 'admin'] as const) {
        const u = await h.user({ role });
        const p = await authorizer.principal(caller({ userId: u.id }));
        expect([p.orgRole, p.isOrgAdmin]).toEqual([role, true]);
        expect(await p.workspaceRole(other)).toBe('admin');
        expect(await p.workspaceRole(archived)).toBe('admin');
        expect(await p.workspaceRole(foreign)).toBeNull();
      }
      const m = await h.user({ role: 'member', workspaces: [[other, 'manager'], [archived, 'admin']] });
      const p = await authorizer.principal(caller({ userId: m.id }));
      expect([p.orgRole, p.isOrgAdmin]).toEqual(['member', false]);
      expect(await p.workspaceRole(other)).toBe('manager');
      expect(await p.workspaceRole('other')).toBe('manager');
      expect(await p.workspaceRole(h.workspaceId)).toBeNull();
      expect(await p.workspaceRole(archived)).toBeNull(); // archived: members lose access until it is restored
      expect(await p.workspaceRole(foreign)).toBeNull();
    });

    test('a role change counts from the next principal; a removed user (or another organisation) is refused with 401', async () => {
      const { h, database, authorizer, caller } = await setup();
      const u = await h.user({ role: 'member' });
      expect((await authorizer.principal(caller({ userId: u.id }))).isOrgAdmin).toBe(false);
      await database.update(users, { role: 'admin' }, (c) => eq(c.id, u.id));
      expect((await authorizer.principal(caller({ userId: u.id }))).isOrgAdmin).toBe(true);
      const inOtherOrg = authorizer.principal(caller({ userId: u.id, organisationId: crypto.randomUUID() }));
      await expect(inOtherOrg).rejects.toMatchObject({ status: 401 });
      await database.delete(users, (c) => eq(c.id, u.id));
      const removed = await authorizer.principal(caller({ userId: u.id })).catch((e: unknown) => e);
      expect(removed).toBeInstanceOf(GatewayError);
      expect((removed as GatewayError).status).toBe(401);
      await expect(authorizer.principal(caller({ userId: null }))).rejects.toMatchObject({ status: 401 });
    });

    test('findWorkspace: by id or slug within the organisation, 404 otherwise', async () => {
      const { h, database, other, foreign } = await setup();
      expect((await findWorkspace(database, h.organisationId, other)).slug).toBe('other');
      expect((await findWorkspace(database, h.organisationId, 'other')).id).toBe(other);
      expect((await findWorkspace(database, h.organisationId, 'default')).id).toBe(h.workspaceId);
      for (const missing of [foreign, 'foreign', 'nope', '', 'x'.repeat(300)]) {
        const error = await findWorkspace(database, h.organisationId, missing).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GatewayError);
        expect((error as GatewayError).status).toBe(404);
      }
      // Inside a transaction too.
      expect(await database.transaction((tx) => findWorkspace(tx, h.organisationId, 'other').then((w) => w.id))).toBe(other);
    });

    test('the bootstrap organisation gets no user', async () => {
      const { database } = await setup();
      expect(await database.count(users)).toBe(0);
    });
  });
}
