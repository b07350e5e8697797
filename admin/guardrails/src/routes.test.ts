/**
 * The /guardrails handlers on both dialects, called directly with chosen roles: workspace guardrails (members read,
 * managers write), organisation-wide ones (everyone of the organisation reads, organisation admins write), what
 * each change leaves in req.audit (secrets masked), the in-memory resolver following every change, and a delete
 * refused while the reference check names users.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { identityMigrations, organisations, workspaces } from '@gateway/admin-identity';
import { SecretBox } from '@gateway/admin-kit';
import { workspaceFields } from '@gateway/admin-kit/testing';
import { configValidator, useLoadedFields } from '@gateway/config';
import { hookConfigFields } from '@gateway/plugin-hooks';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import type { AdminRoute, Database, Role } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import type { GuardrailReference } from './contracts.ts';
import { guardrailRoutes } from './routes.ts';
import { GuardrailStore } from './store.ts';
import { guardrailMigrations } from './tables.ts';
import { adminRequest, routeOf, statusOf, testCaller, testPrincipal } from './testing.ts';

const box = new SecretBox('unit-test-encryption-key');
const entry = { deny: true, 'default.webhook': { webhookURL: 'https://hooks.example/check', headers: { authorization: 'Bearer unit-secret' } } };

// Guardrail entries are the hook engine's config fields: validated as a gateway loading it would (nothing else loaded).
useLoadedFields({ providers: [], strategies: [], plugins: [{ plugin: '@gateway/plugin-hooks', fields: hookConfigFields }] });

for (const dialect of DIALECTS) {
  describe(`guardrail routes [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let database: Database;
    let state: MemoryStateStore;
    let store: GuardrailStore;
    let routes: AdminRoute[];
    let users: GuardrailReference[] = [];
    const org = crypto.randomUUID();
    const ws = crypto.randomUUID();
    const otherWs = crypto.randomUUID();

    beforeAll(async () => {
      database = t.database;
      await database.migrate([...identityMigrations, ...guardrailMigrations]);
      await database.insert(organisations, { id: org, name: 'Org', slug: `org-${org.slice(0, 8)}` });
      await database.insert(workspaces, [
        { id: ws, organisation_id: org, name: 'One', slug: 'one' },
        { id: otherWs, organisation_id: org, name: 'Two', slug: 'two' },
      ]);
      state = new MemoryStateStore();
      store = new GuardrailStore({ database, state, box: () => box, refreshMs: 0, onChange: configValidator.clearCache });
      await store.start();
      routes = guardrailRoutes({ database, store, box: () => box, references: () => ({ referencing: async () => users }), validator: configValidator, fields: () => workspaceFields().documents });
    });
    afterAll(async () => {
      store.stop();
      await state.close();
    });

    const as = (role: Role | null, o: { orgAdmin?: boolean; workspace?: string } = {}) => {
      const caller = testCaller({ organisationId: org, workspaceId: o.workspace ?? ws });
      return testPrincipal(caller, role ? { [o.workspace ?? ws]: role } : {}, o.orgAdmin ?? false);
    };
    const post = () => routeOf(routes, 'POST', '/guardrails');
    const create = async (principal: ReturnType<typeof as>, body: Record<string, unknown>) => {
      const req = adminRequest(principal, { body });
      const res = await post().handle(req);
      return { req, res, view: (await res.json()) as { id: string; slug: string; entry: unknown; workspace_id: string | null } };
    };

    test('workspace guardrails: members read, managers write; no role is as if absent', async () => {
      expect(await statusOf(post(), adminRequest(as('member'), { body: { name: 'm', entry } }))).toBe(403);
      expect(await statusOf(post(), adminRequest(as(null), { body: { name: 'n', entry } }))).toBe(404);
      const { view } = await create(as('manager'), { name: 'Mine', entry });
      const params = { guardrailId: view.id };
      expect(await statusOf(routeOf(routes, 'GET', '/guardrails/:guardrailId'), adminRequest(as('member'), { params }))).toBe(200);
      expect(await statusOf(routeOf(routes, 'GET', '/guardrails/:guardrailId'), adminRequest(as('member', { workspace: otherWs }), { params }))).toBe(404);
      expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as('member'), { params, body: { name: 'x' } }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'DELETE', '/guardrails/:guardrailId'), adminRequest(as('member'), { params }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as('manager'), { params, body: { name: 'x' } }))).toBe(200);
    });

    test('organisation-wide guardrails: any member of the organisation reads, only organisation admins write', async () => {
      expect(await statusOf(post(), adminRequest(as('admin'), { body: { name: 'o', organisation_id: org, entry } }))).toBe(403);
      expect(await statusOf(post(), adminRequest(as('admin', { orgAdmin: true }), { body: { name: 'o', organisation_id: crypto.randomUUID(), entry } }))).toBe(404);
      expect(await statusOf(post(), adminRequest(as('admin', { orgAdmin: true }), { body: { name: 'o', organisation_id: org, workspace_id: ws, entry } }))).toBe(400);
      const { view } = await create(as(null, { orgAdmin: true }), { name: 'Org wide', organisation_id: org, entry });
      expect(view.workspace_id).toBeNull();
      const params = { guardrailId: view.id };
      expect(await statusOf(routeOf(routes, 'GET', '/guardrails/:guardrailId'), adminRequest(as('member', { workspace: otherWs }), { params }))).toBe(200);
      expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as('admin'), { params, body: { name: 'x' } }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'DELETE', '/guardrails/:guardrailId'), adminRequest(as('admin'), { params }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as(null, { orgAdmin: true }), { params, body: { name: 'x' } }))).toBe(200);
    });

    test('every change fills req.audit with secrets masked, and the resolver follows it', async () => {
      const mine = { organisationId: org, workspaceId: ws };
      const { req, view } = await create(as('manager'), { name: 'Audited', entry });
      expect(req.audit).toMatchObject({ resource: 'guardrail', action: 'create', resourceId: view.id, workspaceId: ws, after: { id: view.id, version: 1 } });
      expect(store.resolve(view.id, mine)).toEqual(entry);
      expect(Object.isFrozen(store.resolve(view.id, mine))).toBe(true);
      // Only for its own organisation and workspace (or any workspace of its organisation: an organisation-service key).
      expect(store.resolve(view.id, { organisationId: org, workspaceId: otherWs })).toBeUndefined();
      expect(store.resolve(view.id, { organisationId: 'another-organisation', workspaceId: null })).toBeUndefined();
      expect(store.resolve(view.id, { organisationId: org, workspaceId: null })).toEqual(entry);

      // A reload that brings nothing new changes nothing (no cleared config cache, no rebuilt saved configs).
      const generation = store.generation;
      const held = store.resolve(view.id, mine);
      await store.changed();
      expect(store.generation).toBe(generation);
      expect(store.resolve(view.id, mine)).toBe(held as NonNullable<typeof held>);

      const changed = { ...entry, deny: false };
      const put = adminRequest(as('manager'), { params: { guardrailId: view.slug }, body: { entry: { ...view.entry as object, deny: false } } });
      expect((await routeOf(routes, 'PUT', '/guardrails/:guardrailId').handle(put)).status).toBe(200);
      expect(put.audit).toMatchObject({ action: 'update', resourceId: view.id, before: { version: 1, entry: { deny: true } }, after: { version: 2, entry: { deny: false } } });
      expect(store.resolve(view.id, mine)).toEqual(changed);
      expect(store.generation).toBe(generation + 1);
      expect(store.find(org, ws, view.slug)?.id).toBe(view.id);
      expect(store.find(org, otherWs, view.slug)).toBeUndefined();

      const del = adminRequest(as('manager'), { params: { guardrailId: view.id } });
      expect((await routeOf(routes, 'DELETE', '/guardrails/:guardrailId').handle(del)).status).toBe(204);
      expect(del.audit).toMatchObject({ action: 'delete', resourceId: view.id, before: { version: 2 } });
      expect(store.resolve(view.id, mine)).toBeUndefined();
      expect(JSON.stringify([req.audit, put.audit, del.audit])).not.toContain('unit-secret');
    });

    test('a guardrail configs use is not deleted (409), and nothing changes', async () => {
      const mine = { organisationId: org, workspaceId: ws };
      const { view } = await create(as('manager'), { name: 'Used', entry });
      users = [{ id: 'cfg-1', name: 'Config', workspace_id: ws, by: 'id' }];
      try {
        expect(await statusOf(routeOf(routes, 'DELETE', '/guardrails/:guardrailId'), adminRequest(as('manager'), { params: { guardrailId: view.id } }))).toBe(409);
        // By id only: the slug may change.
        expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as('manager'), { params: { guardrailId: view.id }, body: { slug: 'new-slug' } }))).toBe(200);
        users = [{ id: 'cfg-1', name: 'Config', workspace_id: ws, by: 'slug' }];
        expect(await statusOf(routeOf(routes, 'PUT', '/guardrails/:guardrailId'), adminRequest(as('manager'), { params: { guardrailId: view.id }, body: { slug: 'newer-slug' } }))).toBe(409);
      } finally {
        users = [];
      }
      expect(store.resolve(view.id, mine)).toEqual(entry);
      expect(store.find(org, ws, 'new-slug')?.id).toBe(view.id);
    });
  });
}
