/**
 * The /configs handlers on both dialects, called directly with chosen roles: who may read and write (workspace
 * members read, managers and admins write, organisation admins everything, no role: as if absent), what each
 * change leaves in req.audit (secrets masked), and the resolver's answers for callers of other workspaces.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { GuardrailStore, guardrailMigrations, savedGuardrails } from '@gateway/admin-guardrails';
import { adminRequest, routeOf, statusOf, testCaller, testPrincipal } from '@gateway/admin-guardrails/testing';
import { identityMigrations, organisations, workspaces } from '@gateway/admin-identity';
import { SecretBox } from '@gateway/admin-kit';
import { workspaceFields } from '@gateway/admin-kit/testing';
import { configValidator, useLoadedFields } from '@gateway/config';
import { hookConfigFields } from '@gateway/plugin-hooks';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type AdminRoute, type Database, eq, type Role } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import { configRoutes } from './routes.ts';
import { ConfigStore, MISSING_GUARDRAIL_CHECK } from './store.ts';
import { configMigrations } from './tables.ts';

const SECRET = 'sk-unit-provider-key-42';
const box = new SecretBox('unit-test-encryption-key');

// Guardrail entries are the hook engine's config fields: validated as a gateway loading it would (nothing else loaded).
useLoadedFields({ providers: [], strategies: [], plugins: [{ plugin: '@gateway/plugin-hooks', fields: hookConfigFields }] });

for (const dialect of DIALECTS) {
  describe(`config routes [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let database: Database;
    let state: MemoryStateStore;
    let store: ConfigStore;
    let guardrails: GuardrailStore;
    let routes: AdminRoute[];
    const org = crypto.randomUUID();
    const ws = crypto.randomUUID();
    const otherWs = crypto.randomUUID();

    beforeAll(async () => {
      database = t.database;
      await database.migrate([...identityMigrations, ...guardrailMigrations, ...configMigrations]);
      await database.insert(organisations, { id: org, name: 'Org', slug: `org-${org.slice(0, 8)}` });
      await database.insert(workspaces, [
        { id: ws, organisation_id: org, name: 'One', slug: 'one' },
        { id: otherWs, organisation_id: org, name: 'Two', slug: 'two' },
      ]);
      state = new MemoryStateStore();
      guardrails = new GuardrailStore({ database, state, box: () => box, refreshMs: 0, onChange: configValidator.clearCache });
      store = new ConfigStore({ database, state, box: () => box, guardrails: () => guardrails, refreshMs: 0 });
      await Promise.all([guardrails.start(), store.start()]);
      routes = configRoutes({ database, store, box: () => box, guardrails: () => guardrails, validator: configValidator, fields: () => workspaceFields().documents });
    });
    afterAll(async () => {
      store.stop();
      guardrails.stop();
      await state.close();
    });

    const as = (role: Role | null, o: { orgAdmin?: boolean; workspace?: string } = {}) => {
      const caller = testCaller({ organisationId: org, workspaceId: o.workspace ?? ws });
      return testPrincipal(caller, role ? { [o.workspace ?? ws]: role } : {}, o.orgAdmin ?? false);
    };
    const create = (principal: ReturnType<typeof as>, body: Record<string, unknown>) => {
      const req = adminRequest(principal, { body });
      return { req, answer: routeOf(routes, 'POST', '/configs').handle(req) as Promise<Response> };
    };
    const config = { provider: 'openai', api_key: SECRET, custom_host: 'http://127.0.0.1:9/v1' };

    test('members read, managers and admins write, no role is as if absent', async () => {
      const post = routeOf(routes, 'POST', '/configs');
      expect(await statusOf(post, adminRequest(as('member'), { body: { name: 'm', config } }))).toBe(403);
      expect(await statusOf(post, adminRequest(as(null), { body: { name: 'n', config } }))).toBe(404);
      const { answer } = create(as('manager'), { name: 'by manager', config });
      const created = (await (await answer).json()) as { id: string };

      const params = { configId: created.id };
      expect(await statusOf(routeOf(routes, 'GET', '/configs/:configId'), adminRequest(as('member'), { params }))).toBe(200);
      expect(await statusOf(routeOf(routes, 'GET', '/configs/:configId/versions'), adminRequest(as('member'), { params }))).toBe(200);
      expect(await statusOf(routeOf(routes, 'GET', '/configs/:configId'), adminRequest(as(null), { params }))).toBe(404);
      expect(await statusOf(routeOf(routes, 'PUT', '/configs/:configId'), adminRequest(as('member'), { params, body: { name: 'x' } }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'DELETE', '/configs/:configId'), adminRequest(as('member'), { params }))).toBe(403);
      expect(await statusOf(routeOf(routes, 'PUT', '/configs/:configId'), adminRequest(as('admin'), { params, body: { name: 'x' } }))).toBe(200);
      // An organisation admin, acting from another workspace, writes anywhere.
      const orgAdmin = as(null, { orgAdmin: true, workspace: otherWs });
      expect(await statusOf(routeOf(routes, 'PUT', '/configs/:configId'), adminRequest(orgAdmin, { params, body: { name: 'y' } }))).toBe(200);
      // A member of another workspace lists nothing of this one.
      const list = await routeOf(routes, 'GET', '/configs').handle(adminRequest(as('member', { workspace: otherWs })));
      expect(((await list.json()) as { data: { id: string }[] }).data.some((c) => c.id === created.id)).toBe(false);
    });

    test('validate: a dry run of the PUT, every violation listed, masked secrets put back, nothing written', async () => {
      const { answer } = create(as('manager'), { name: 'Dry run', config });
      const created = (await (await answer).json()) as { id: string };
      const route = routeOf(routes, 'POST', '/configs/:configId/validate');
      const params = { configId: created.id };
      const validate = async (body: unknown, principal = as('manager')) => {
        const req = adminRequest(principal, { params, body });
        const response = await route.handle(req);
        return { status: response.status, body: (await response.json()) as { object: string; valid: boolean; violations: string[] }, audit: req.audit };
      };
      const bad = await validate({ config: { provider: 'openai', bogus: 1, retry: { attempts: -1 } } });
      expect(bad.status).toBe(200);
      expect(bad.body.object).toBe('config_validation');
      expect(bad.body.valid).toBe(false);
      expect(bad.body.violations.some((v) => v.startsWith('bogus'))).toBe(true);
      expect(bad.body.violations.some((v) => v.startsWith('retry.attempts'))).toBe(true);
      // "********" where the stored key is: accepted, as the PUT would.
      const good = await validate({ config: { ...config, api_key: '********', retry: { attempts: 2 } } });
      expect(good.body).toEqual({ object: 'config_validation', valid: true, violations: [] });
      expect(good.audit).toEqual({});
      expect((await validate({ config: [] })).body.violations).toEqual(['config: must be a JSON object']);
      // The same roles as the PUT; nothing stored either way.
      expect(await statusOf(route, adminRequest(as('member'), { params, body: { config } }))).toBe(403);
      expect(await statusOf(route, adminRequest(as(null), { params, body: { config } }))).toBe(404);
      const versions = await routeOf(routes, 'GET', '/configs/:configId/versions').handle(adminRequest(as('member'), { params }));
      expect(((await versions.json()) as { total: number }).total).toBe(1);
    });

    test('every change fills req.audit, with secrets masked', async () => {
      const { req, answer } = create(as('manager'), { name: 'Audited', config });
      const created = (await (await answer).json()) as { id: string };
      expect(req.audit).toMatchObject({ resource: 'config', action: 'create', resourceId: created.id, workspaceId: ws, after: { id: created.id, version: 1 } });

      const put = adminRequest(as('manager'), { params: { configId: created.id }, body: { config: { ...config, custom_host: 'http://127.0.0.1:10/v1' } } });
      await routeOf(routes, 'PUT', '/configs/:configId').handle(put);
      expect(put.audit).toMatchObject({
        resource: 'config',
        action: 'update',
        resourceId: created.id,
        workspaceId: ws,
        before: { version: 1, config: { custom_host: 'http://127.0.0.1:9/v1' } },
        after: { version: 2, config: { custom_host: 'http://127.0.0.1:10/v1' } },
      });

      const del = adminRequest(as('manager'), { params: { configId: created.id } });
      expect((await routeOf(routes, 'DELETE', '/configs/:configId').handle(del)).status).toBe(204);
      expect(del.audit).toMatchObject({ resource: 'config', action: 'delete', resourceId: created.id, before: { version: 2 } });
      expect(JSON.stringify([req.audit, put.audit, del.audit])).not.toContain(SECRET);
    });

    test('the resolver: same object until a change, 403 for another workspace, unknown to another organisation', async () => {
      const { answer } = create(as('manager'), { name: 'Resolved', slug: 'resolved', config });
      const { id } = (await (await answer).json()) as { id: string };
      const mine = testCaller({ organisationId: org, workspaceId: ws, keyType: 'workspace-service', userId: null });
      const first = store.resolve(id, mine);
      expect(first).toEqual(config);
      expect(store.resolve(id, mine)).toBe(first as NonNullable<typeof first>);
      expect(store.resolve('resolved', mine)).toBe(first as NonNullable<typeof first>);
      expect(() => store.resolve(id, testCaller({ organisationId: org, workspaceId: otherWs }))).toThrow('another workspace');
      expect(store.resolve(id, testCaller({ organisationId: org, workspaceId: otherWs, keyType: 'organisation-service' }))).toBe(first as NonNullable<typeof first>);
      expect(store.resolve(id, testCaller({ organisationId: crypto.randomUUID(), workspaceId: ws }))).toBeUndefined();
      expect(store.resolve('resolved', testCaller({ organisationId: org, workspaceId: otherWs }))).toBeUndefined();
      expect(() => store.resolve(id, undefined)).toThrow();

      // A reload that finds nothing changed (the periodic one, another process's message) keeps the object, and so
      // the hook engine's plan and nothing is re-frozen; so does a change to another config.
      await store.changed();
      expect(store.resolve(id, mine)).toBe(first as NonNullable<typeof first>);
      await create(as('manager'), { name: 'Another', config }).answer;
      expect(store.resolve(id, mine)).toBe(first as NonNullable<typeof first>);

      await routeOf(routes, 'PUT', '/configs/:configId').handle(adminRequest(as('manager'), { params: { configId: id }, body: { config: { ...config, api_key: 'sk-other' } } }));
      const second = store.resolve(id, mine);
      expect(second).not.toBe(first as NonNullable<typeof first>);
      expect(second?.api_key).toBe('sk-other');
    });

    test('a saved guardrail that cannot be found any more stands as a denying entry, not as no guardrail', async () => {
      expect(guardrails.find(org, ws, 'gone-guard')).toBeUndefined();
      await database.insert(savedGuardrails, {
        id: crypto.randomUUID(),
        organisation_id: org,
        workspace_id: ws,
        scope: ws,
        name: 'Gone',
        slug: 'gone-guard',
        entry: { deny: true, 'default.contains': { words: ['x'] } },
      });
      await guardrails.changed();
      const { answer } = create(as('manager'), { name: 'Guarded', config: { ...config, input_guardrails: ['gone-guard'] } });
      const { id } = (await (await answer).json()) as { id: string };
      const caller = testCaller({ organisationId: org, workspaceId: ws });
      expect(store.resolve(id, caller)?.input_guardrails as unknown).toEqual([{ id: 'gone-guard', deny: true, 'default.contains': { words: ['x'] } }]);

      await database.delete(savedGuardrails, (c) => eq(c.slug, 'gone-guard'));
      await guardrails.changed();
      expect(store.resolve(id, caller)?.input_guardrails as unknown).toEqual([{ id: 'gone-guard', deny: true, [MISSING_GUARDRAIL_CHECK]: {} }]);
    });

    test('an archived workspace takes no new config', async () => {
      await database.update(workspaces, { status: 'archived' }, (c) => eq(c.id, otherWs));
      try {
        const post = routeOf(routes, 'POST', '/configs');
        expect(await statusOf(post, adminRequest(as('admin', { workspace: otherWs }), { body: { name: 'late', config } }))).toBe(409);
      } finally {
        await database.update(workspaces, { status: 'active' }, (c) => eq(c.id, otherWs));
      }
    });
  });
}
