// The /api-keys routes end to end (an in-process gateway, requests through its HTTP handler) on SQLite and MariaDB:
// the secret shown once, validation naming the field with nothing written, who may see and change which key,
// lists and filters, revocation and deletion taking effect at once, and audit entries without secrets.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { addUser, addWorkspace, authenticates, type Json, type KeysGateway, startKeysGateway, TEST_ADMIN_KEY } from './api-keys-support.ts';

const DAY = 86_400_000;
const future = (ms = 30 * DAY) => new Date(Date.now() + ms).toISOString();

interface Key extends Json {
  id: string;
  key?: string;
  scopes: string[];
}

for (const dialect of DIALECTS) {
  describe(`/api-keys [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let k: KeysGateway;
    let other: string; // a second workspace
    let wsAdmin: string; // users
    let member: string;
    let outsider: string;

    beforeAll(async () => {
      k = await startKeysGateway(t.url, { API_KEY_PREFIX: 'gwk-' });
      other = await addWorkspace(k.database, k.organisationId, 'other');
      wsAdmin = await addUser(k.database, k.organisationId, 'ws-admin@example.test', 'member', [{ workspaceId: k.workspaceId, role: 'admin' }]);
      member = await addUser(k.database, k.organisationId, 'member@example.test', 'member', [{ workspaceId: k.workspaceId, role: 'member' }]);
      outsider = await addUser(k.database, k.organisationId, 'outsider@example.test', 'member', [{ workspaceId: other, role: 'member' }]);
    });
    afterAll(() => k?.close());

    const create = (body: Json, key = TEST_ADMIN_KEY) => k.call<Key>('POST', '/api-keys', body, key);
    const userKey = async (userId: string, scopes: string[], workspace = 'default') => {
      const r = await create({ name: `user ${userId}`, type: 'workspace-user', workspace_id: workspace, user_id: userId, scopes });
      expect(r.status).toBe(201);
      return r.body;
    };

    test('create: the secret once, with API_KEY_PREFIX; it authenticates; reads never show it or its hash', async () => {
      const r = await create({ name: 'service', type: 'workspace-service', workspace_id: 'default', scopes: ['api_keys.read', 'completions.write'], description: 'batch jobs' });
      expect(r.status).toBe(201);
      const secret = r.body.key ?? '';
      expect(secret).toMatch(/^gwk-[A-Za-z0-9_-]{40}$/);
      expect(r.body).toMatchObject({
        object: 'api_key',
        name: 'service',
        description: 'batch jobs',
        type: 'workspace-service',
        organisation_id: k.organisationId,
        workspace_id: k.workspaceId, // the slug resolved
        user_id: null,
        scopes: ['api_keys.read', 'completions.write'],
        status: 'active',
        prefix_hint: secret.slice(0, 8),
        expires_at: null,
        last_used_at: null,
        last_reset_at: null,
        last_rotated_at: null,
        rotation_policy: null,
        next_rotation_at: null,
        rotation_period_days: null,
        key_transition_expires_at: null,
      });

      const own = await k.call<Key>('GET', `/api-keys/${r.body.id}`, undefined, secret);
      expect(own.status).toBe(200);
      expect(own.body.key).toBeUndefined();
      const listed = await k.call('GET', '/api-keys?page_size=1000');
      for (const shown of [own.body, listed.body]) {
        expect(JSON.stringify(shown)).not.toContain(secret);
        expect(JSON.stringify(shown)).not.toContain(hashSecret(secret));
      }
      // last_used_at is written off the request path.
      let used: unknown = null;
      for (let i = 0; i < 50 && !used; i++, await Bun.sleep(20)) used = (await k.call<Key>('GET', `/api-keys/${r.body.id}`)).body.last_used_at;
      expect(typeof used).toBe('string');
    });

    test('the audit log records each change without the secret or its hash', async () => {
      const r = await create({ name: 'audited', type: 'organisation-service', scopes: ['api_keys.read'] });
      expect(r.status).toBe(201);
      expect((await k.call('PUT', `/api-keys/${r.body.id}`, { name: 'audited 2' })).status).toBe(200);
      const rotated = await k.call<Key>('POST', `/api-keys/${r.body.id}/rotate`, {});
      expect(rotated.status).toBe(200);
      expect((await k.call('DELETE', `/api-keys/${r.body.id}`)).status).toBe(204);
      const log = await k.call<{ data: Json[] }>('GET', `/audit-logs?resource=api_key&resource_id=${r.body.id}&page_size=10`);
      expect(log.status).toBe(200);
      expect(log.body.data.map((e) => e.action).sort()).toEqual(['create', 'delete', 'rotate', 'update']);
      const text = JSON.stringify(log.body);
      for (const secret of [r.body.key ?? '', rotated.body.key ?? '']) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(hashSecret(secret));
      }
    });

    test('bad input: 400 naming the field, and nothing written', async () => {
      const before = await k.database.count(apiKeys);
      const base = { name: 'k', type: 'workspace-service', workspace_id: k.workspaceId, scopes: ['completions.write'] };
      const user = { ...base, type: 'workspace-user', user_id: member };
      const cases: [Json, string][] = [
        [{ ...base, name: '' }, 'name'],
        [{ ...base, name: 'x'.repeat(256) }, 'name'],
        [{ ...base, type: 'robot' }, 'type'],
        [{ ...base, workspace_id: undefined }, 'workspace_id'],
        [{ ...base, type: 'organisation-service' }, 'workspace_id'],
        [{ ...base, workspace_id: 'no-such-workspace' }, 'workspace_id'],
        [{ ...base, type: 'workspace-user' }, 'user_id'],
        [{ ...base, user_id: member }, 'user_id'],
        [{ ...user, user_id: outsider }, 'user_id'], // not a member of this workspace
        [{ ...user, user_id: crypto.randomUUID() }, 'user_id'],
        [{ ...base, scopes: ['no_such.scope'] }, 'scopes[0]'],
        [{ ...base, scopes: ['completions.write', 'made_up'] }, 'scopes[1]'],
        [{ ...base, scopes: [] }, 'scopes'],
        [{ ...base, scopes: 'completions.write' }, 'scopes'],
        [{ ...base, scopes: ['completions.write', 'completions.write'] }, 'scopes'],
        [{ ...base, expires_at: new Date(Date.now() - 1000).toISOString() }, 'expires_at'],
        [{ ...base, expires_at: 'next tuesday' }, 'expires_at'],
        [{ ...base, expires_at: '2031-01-01T00:00:00' }, 'expires_at'], // no time zone
        [{ ...base, rotation_policy: 'weekly' }, 'rotation_policy'],
        [{ ...base, rotation_policy: {} }, 'rotation_policy.rotation_period'],
        [{ ...base, rotation_policy: { rotation_period: 'daily' } }, 'rotation_policy.rotation_period'],
        [{ ...base, rotation_policy: { rotation_period: 'weekly', next_rotation_at: new Date(Date.now() - 1).toISOString() } }, 'rotation_policy.next_rotation_at'],
        [{ ...base, rotation_policy: { rotation_period: 'weekly', next_rotation_at: 'soon' } }, 'rotation_policy.next_rotation_at'],
        [{ ...base, rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 1_799_999 } }, 'rotation_policy.key_transition_period_ms'],
        [{ ...base, rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 1_800_000.5 } }, 'rotation_policy.key_transition_period_ms'],
        [{ ...base, rotation_policy: { rotation_period: 'weekly', colour: 'red' } }, 'rotation_policy.colour'],
        [{ ...base, colour: 'red' }, 'colour'],
      ];
      for (const [body, param] of cases) {
        const r = await k.call<{ error: Json }>('POST', '/api-keys', body);
        expect({ body, status: r.status, param: r.body.error?.param }).toEqual({ body, status: 400, param });
        expect(r.body.error.type).toBe('invalid_request_error');
      }
      const malformed = await k.gateway.handle(
        new Request('http://gateway.test/v1/api-keys', { method: 'POST', headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' }, body: '{"name":' }),
      );
      expect(malformed.status).toBe(400);
      expect(await k.database.count(apiKeys)).toBe(before);

      // Updates and rotations are checked the same way, and change nothing when refused.
      const made = await create({ ...base, name: 'untouched' });
      const id = made.body.id;
      const updates: [Json, string | null][] = [
        [{}, null],
        [{ name: '' }, 'name'],
        [{ status: 'paused' }, 'status'],
        [{ scopes: ['nope.nope'] }, 'scopes[0]'],
        [{ expires_at: '2000-01-01T00:00:00Z' }, 'expires_at'],
        [{ rotation_policy: { rotation_period: 'yearly' } }, 'rotation_policy.rotation_period'],
        [{ name: 'valid', rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 60_000 } }, 'rotation_policy.key_transition_period_ms'],
        [{ type: 'workspace-user' }, 'type'],
      ];
      for (const [body, param] of updates) {
        const r = await k.call<{ error: Json }>('PUT', `/api-keys/${id}`, body);
        expect({ body, status: r.status, param: r.body.error?.param }).toEqual({ body, status: 400, param });
      }
      for (const body of [{ key_transition_period_ms: 1_000 }, { key_transition_period_ms: '1800000' }, { rotation_period: 'weekly' }]) {
        const r = await k.call<{ error: Json }>('POST', `/api-keys/${id}/rotate`, body);
        expect(r.status).toBe(400);
      }
      const after = await k.call<Key>('GET', `/api-keys/${id}`);
      expect(after.body).toEqual({ ...made.body, key: undefined, last_used_at: after.body.last_used_at } as Key);
      expect(await authenticates(k, made.body.key ?? '')).toBe(true);
    });

    test('a key cannot grant scopes its creator lacks, unless the creator has *', async () => {
      const limited = await create({ name: 'limited', type: 'organisation-service', scopes: ['api_keys.write', 'api_keys.read'] });
      const secret = limited.body.key ?? '';
      const ok = await create({ name: 'narrower', type: 'organisation-service', scopes: ['api_keys.read'] }, secret);
      expect(ok.status).toBe(201);
      const refused = await create({ name: 'wider', type: 'organisation-service', scopes: ['api_keys.read', 'completions.write'] }, secret);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
      expect(JSON.stringify(refused.body)).toContain('completions.write');
      expect((await create({ name: 'star', type: 'organisation-service', scopes: ['*'] }, secret)).status).toBe(403);
      // Adding a scope by update is the same; keeping a scope it already has is not granting it.
      expect((await k.call('PUT', `/api-keys/${ok.body.id}`, { scopes: ['api_keys.read', 'logs.read'] }, secret)).status).toBe(403);
      const wide = await create({ name: 'wide', type: 'organisation-service', scopes: ['logs.read', 'api_keys.read'] });
      expect((await k.call('PUT', `/api-keys/${wide.body.id}`, { scopes: ['logs.read'] }, secret)).status).toBe(200);
      // The bootstrap key (*) grants anything of the catalogue, agents.invoke included.
      expect((await create({ name: 'agents', type: 'workspace-service', workspace_id: other, scopes: ['agents.invoke', '*'] })).status).toBe(201);
    });

    test('list: filters by workspace (id or slug), type and user; paginated with a total', async () => {
      const ws = await addWorkspace(k.database, k.organisationId, `list-${dialect}`);
      const person = await addUser(k.database, k.organisationId, `list-${dialect}@example.test`, 'member', [{ workspaceId: ws, role: 'member' }]);
      for (let i = 0; i < 3; i++) expect((await create({ name: `svc ${i}`, type: 'workspace-service', workspace_id: ws, scopes: ['completions.write'] })).status).toBe(201);
      expect((await create({ name: 'mine', type: 'workspace-user', workspace_id: ws, user_id: person, scopes: ['completions.write'] })).status).toBe(201);

      const all = await k.call<{ object: string; data: Key[]; total: number }>('GET', `/api-keys?workspace_id=list-${dialect}`);
      expect(all.body).toMatchObject({ object: 'list', total: 4 });
      expect(all.body.data.every((key) => key.workspace_id === ws)).toBe(true);
      const byId = await k.call<{ total: number }>('GET', `/api-keys?workspace_id=${ws}&type=workspace-service`);
      expect(byId.body.total).toBe(3);
      const byUser = await k.call<{ data: Key[] }>('GET', `/api-keys?user_id=${person}`);
      expect(byUser.body.data.map((key) => key.name)).toEqual(['mine']);
      const page0 = await k.call<{ data: Key[]; total: number }>('GET', `/api-keys?workspace_id=${ws}&page_size=3&current_page=0`);
      const page1 = await k.call<{ data: Key[]; total: number }>('GET', `/api-keys?workspace_id=${ws}&page_size=3&current_page=1`);
      expect([page0.body.data.length, page1.body.data.length, page1.body.total]).toEqual([3, 1, 4]);
      expect(new Set([...page0.body.data, ...page1.body.data].map((key) => key.id)).size).toBe(4);
      for (const [query, param] of [
        ['type=robot', 'type'],
        ['workspace_id=nowhere', 'workspace_id'],
        ['page_size=0', 'page_size'],
        ['current_page=-1', 'current_page'],
      ] as const) {
        const r = await k.call<{ error: Json }>('GET', `/api-keys?${query}`);
        expect([r.status, r.body.error.param]).toEqual([400, param]);
      }
    });

    test('who: a workspace admin manages its workspace keys only; a member reads its own keys only', async () => {
      const adminKey = (await userKey(wsAdmin, ['api_keys.read', 'api_keys.write', 'api_keys.delete', 'completions.write'])).key ?? '';
      const memberKey = await userKey(member, ['api_keys.read', 'api_keys.write', 'api_keys.delete']);
      const orgKey = await create({ name: 'org', type: 'organisation-service', scopes: ['api_keys.read'] });
      const elsewhere = await create({ name: 'elsewhere', type: 'workspace-service', workspace_id: other, scopes: ['completions.write'] });

      // The workspace admin: creates and changes keys of its workspace, not elsewhere, not organisation keys.
      const made = await create({ name: 'by ws admin', type: 'workspace-service', workspace_id: 'default', scopes: ['completions.write'] }, adminKey);
      expect(made.status).toBe(201);
      expect((await create({ name: 'x', type: 'workspace-service', workspace_id: other, scopes: ['completions.write'] }, adminKey)).status).toBe(404);
      expect((await create({ name: 'x', type: 'organisation-service', scopes: ['completions.write'] }, adminKey)).status).toBe(403);
      expect((await k.call('GET', `/api-keys/${orgKey.body.id}`, undefined, adminKey)).status).toBe(404);
      expect((await k.call('GET', `/api-keys/${elsewhere.body.id}`, undefined, adminKey)).status).toBe(404);
      expect((await k.call('PUT', `/api-keys/${elsewhere.body.id}`, { name: 'mine now' }, adminKey)).status).toBe(404);
      expect((await k.call('PUT', `/api-keys/${memberKey.id}`, { name: 'renamed by admin' }, adminKey)).status).toBe(200);
      const seen = await k.call<{ data: Key[] }>('GET', '/api-keys?page_size=1000', undefined, adminKey);
      expect(seen.body.data.length).toBeGreaterThan(0);
      expect(seen.body.data.every((key) => key.workspace_id === k.workspaceId && key.type !== 'organisation-service')).toBe(true);

      // The member: its own keys, read only.
      const secret = memberKey.key ?? '';
      const mine = await k.call<{ data: Key[]; total: number }>('GET', '/api-keys', undefined, secret);
      expect(mine.body.data.map((key) => key.id)).toEqual([memberKey.id]);
      expect(mine.body.total).toBe(1);
      expect((await k.call('GET', `/api-keys/${memberKey.id}`, undefined, secret)).status).toBe(200);
      expect((await k.call('GET', `/api-keys/${made.body.id}`, undefined, secret)).status).toBe(404);
      expect((await k.call('PUT', `/api-keys/${memberKey.id}`, { name: 'self-renamed' }, secret)).status).toBe(403);
      expect((await k.call('DELETE', `/api-keys/${memberKey.id}`, undefined, secret)).status).toBe(403);
      expect((await create({ name: 'self-made', type: 'workspace-user', workspace_id: 'default', user_id: member, scopes: ['api_keys.read'] }, secret)).status).toBe(403);

      // A workspace-service key acts as admin of its own workspace only.
      const svc = (await create({ name: 'svc admin', type: 'workspace-service', workspace_id: 'default', scopes: ['api_keys.read', 'api_keys.write'] })).body.key ?? '';
      expect((await k.call('PUT', `/api-keys/${made.body.id}`, { name: 'by svc' }, svc)).status).toBe(200);
      expect((await k.call('GET', `/api-keys/${elsewhere.body.id}`, undefined, svc)).status).toBe(404);
      // Scopes still count: no api_keys.delete on this one.
      expect((await k.call('DELETE', `/api-keys/${made.body.id}`, undefined, svc)).status).toBe(403);
    });

    test('update, revoke and delete take effect at once', async () => {
      const made = await create({ name: 'to change', type: 'workspace-service', workspace_id: 'default', scopes: ['api_keys.read'] });
      const secret = made.body.key ?? '';
      expect(await authenticates(k, secret)).toBe(true);
      const expires = future(10 * DAY);
      const updated = await k.call<Key>('PUT', `/api-keys/${made.body.id}`, {
        name: 'changed',
        description: null,
        scopes: ['api_keys.read', 'logs.read'],
        expires_at: expires,
        rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: 7_200_000 },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        name: 'changed',
        scopes: ['api_keys.read', 'logs.read'],
        expires_at: expires,
        rotation_period_days: 30,
        rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: 7_200_000 },
      });
      const next = Date.parse(String(updated.body.next_rotation_at));
      expect(Math.abs(next - (k.clock.now() + 30 * DAY))).toBeLessThan(60_000);

      expect((await k.call<Key>('PUT', `/api-keys/${made.body.id}`, { status: 'revoked' })).body.status).toBe('revoked');
      expect(await authenticates(k, secret)).toBe(false);
      expect((await k.call<Key>('PUT', `/api-keys/${made.body.id}`, { status: 'active', rotation_policy: null })).body).toMatchObject({
        status: 'active',
        rotation_policy: null,
        next_rotation_at: null,
        rotation_period_days: null,
      });
      expect(await authenticates(k, secret)).toBe(true);

      expect((await k.call('DELETE', `/api-keys/${made.body.id}`)).status).toBe(204);
      expect(await authenticates(k, secret)).toBe(false);
      expect((await k.call('GET', `/api-keys/${made.body.id}`)).status).toBe(404);
      expect((await k.call('DELETE', `/api-keys/${made.body.id}`)).status).toBe(404);
    });

    test('an expired key is refused; a key expiring later works until then (the plugin clock)', async () => {
      const made = await create({ name: 'short', type: 'workspace-service', workspace_id: 'default', scopes: ['api_keys.read'], expires_at: future(DAY) });
      expect(await authenticates(k, made.body.key ?? '')).toBe(true);
      k.clock.advance(DAY + 1);
      try {
        expect(await authenticates(k, made.body.key ?? '')).toBe(false);
        expect((await k.call<{ error: Json }>('POST', `/api-keys/${made.body.id}/rotate`, {})).status).toBe(409);
      } finally {
        k.clock.advance(-(DAY + 1));
      }
    });
  });
}
