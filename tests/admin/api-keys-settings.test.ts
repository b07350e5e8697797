// API keys and the organisation's key settings, end to end on SQLite and MariaDB with the real identity and settings
// plugins: the enforced rotation period of workspace-user keys (given to keys created without a policy, a
// different one refused at create and update), the default key auto-created for a member who joins a workspace
// (its expiry from the workspace's user_api_key_ttl), and a removed member's keys going with them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AUTO_CREATED_KEY_SCOPES } from '@gateway/admin-api-keys';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { addUser, addWorkspace, authenticates, type Json, type KeysGateway, startKeysGateway } from './api-keys-support.ts';

const DAY = 86_400_000;

interface Key extends Json {
  id: string;
  key?: string;
}
interface Issued {
  id: string;
  key?: string;
  workspace_id: string;
  user_id: string;
  pending_secret: boolean;
}

for (const dialect of DIALECTS) {
  describe(`API key settings [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let k: KeysGateway;

    beforeAll(async () => {
      k = await startKeysGateway(t.url);
    });
    afterAll(() => k?.close());

    const settings = async (path: string, body: Json) => {
      const r = await k.call('PUT', path, body);
      expect(r.status).toBe(200);
    };

    test('the enforced rotation period: given to user keys without a policy, a different one refused at create and update', async () => {
      const ws = await addWorkspace(k.database, k.organisationId, `enforced-${dialect}`);
      const user = await addUser(k.database, k.organisationId, `enforced-${dialect}@example.test`, 'member', [{ workspaceId: ws, role: 'member' }]);
      await settings('/settings/api-keys', { user_api_key_rotation_period: 'weekly' });
      try {
        const base = { name: 'u', type: 'workspace-user', workspace_id: ws, user_id: user, scopes: ['completions.write'] };
        const plain = await k.call<Key>('POST', '/api-keys', base);
        expect(plain.status).toBe(201);
        expect(plain.body).toMatchObject({ rotation_period_days: 7, rotation_policy: { rotation_period: 'weekly' } });
        expect(Math.abs(Date.parse(String(plain.body.next_rotation_at)) - (k.clock.now() + 7 * DAY))).toBeLessThan(60_000);

        const different = await k.call<{ error: Json }>('POST', '/api-keys', { ...base, rotation_policy: { rotation_period: 'monthly' } });
        expect([different.status, different.body.error.param]).toEqual([400, 'rotation_policy.rotation_period']);
        const same = await k.call<Key>('POST', '/api-keys', { ...base, rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 7_200_000 } });
        expect(same.body).toMatchObject({ rotation_period_days: 7, rotation_policy: { key_transition_period_ms: 7_200_000 } });
        const periodless = await k.call<Key>('POST', '/api-keys', { ...base, rotation_policy: { key_transition_period_ms: 7_200_000 } });
        expect(periodless.body).toMatchObject({ rotation_period_days: 7 });
        const explicitNull = await k.call<Key>('POST', '/api-keys', { ...base, rotation_policy: null });
        expect(explicitNull.body).toMatchObject({ rotation_period_days: 7 });

        for (const [body, param] of [
          [{ rotation_policy: { rotation_period: 'monthly' } }, 'rotation_policy.rotation_period'],
          [{ rotation_policy: null }, 'rotation_policy'],
        ] as const) {
          const r = await k.call<{ error: Json }>('PUT', `/api-keys/${plain.body.id}`, body);
          expect([r.status, r.body.error.param]).toEqual([400, param]);
        }
        expect((await k.call<Key>('GET', `/api-keys/${plain.body.id}`)).body).toMatchObject({ rotation_period_days: 7 });
        expect((await k.call('PUT', `/api-keys/${plain.body.id}`, { rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 3_600_000 } })).status).toBe(200);

        // Service keys are not concerned.
        const svc = await k.call<Key>('POST', '/api-keys', { ...base, type: 'workspace-service', user_id: undefined });
        expect(svc.body).toMatchObject({ rotation_policy: null });
        expect((await k.call('POST', '/api-keys', { ...base, type: 'workspace-service', user_id: undefined, rotation_policy: { rotation_period: 'monthly' } })).status).toBe(201);

        // A workspace override wins over the organisation's period.
        await settings(`/workspaces/${ws}/settings/api-keys`, { user_api_key_rotation_period: 'monthly' });
        expect((await k.call<Key>('POST', '/api-keys', base)).body).toMatchObject({ rotation_period_days: 30 });
        expect((await k.call('POST', '/api-keys', { ...base, rotation_policy: { rotation_period: 'weekly' } })).status).toBe(400);
        await settings(`/workspaces/${ws}/settings/api-keys`, { user_api_key_rotation_period: null });
        expect((await k.call<Key>('POST', '/api-keys', base)).body).toMatchObject({ rotation_policy: null });
      } finally {
        await settings('/settings/api-keys', { user_api_key_rotation_period: null });
      }
    });

    test('auto-create: a member who joins gets a default key that waits for them, picked up once; a member who leaves loses their keys', async () => {
      const ws = await addWorkspace(k.database, k.organisationId, `auto-${dialect}`);
      const second = await addWorkspace(k.database, k.organisationId, `auto-2-${dialect}`);
      const quiet = await addWorkspace(k.database, k.organisationId, `quiet-${dialect}`);
      await settings('/settings/api-keys', { user_api_key_auto_create: true, user_api_key_rotation_period: 'monthly' });
      await settings(`/workspaces/${ws}/settings/api-keys`, { user_api_key_ttl: 86_400 });
      await settings(`/workspaces/${quiet}/settings/api-keys`, { user_api_key_auto_create: false });
      try {
        const created = await k.call<{ id: string; api_keys: Issued[] }>('POST', '/users', {
          email: `joiner-${dialect}@example.test`,
          workspaces: [{ id: ws, role: 'member' }, { id: quiet, role: 'member' }],
        });
        expect(created.status).toBe(201);
        expect(created.body.api_keys).toHaveLength(1);
        const issued = created.body.api_keys[0] as Issued;
        // Made by an admin for someone else: the secret is not in the answer, it waits for the member.
        expect(issued).toEqual({ id: issued.id, workspace_id: ws, user_id: created.body.id, pending_secret: true });
        const own = await k.call<Key>('POST', '/api-keys', { name: 'own', type: 'workspace-user', workspace_id: ws, user_id: created.body.id, scopes: ['workspace_user_api_keys.rotate'] });
        expect(own.status).toBe(201);
        expect((await k.call('POST', `/api-keys/${issued.id}/reveal`)).status).toBe(403);
        const picked = await k.call<Key>('POST', `/api-keys/${issued.id}/reveal`, undefined, own.body.key);
        expect(picked.status).toBe(200);
        const issuedKey = String(picked.body.key);
        expect(await authenticates(k, issuedKey)).toBe(true);
        const shown = await k.call<Key>('GET', `/api-keys/${issued.id}`, undefined, issuedKey);
        expect(shown.body).toMatchObject({ type: 'workspace-user', user_id: created.body.id, workspace_id: ws, scopes: [...AUTO_CREATED_KEY_SCOPES], rotation_period_days: 30 });
        expect(shown.body.key).toBeUndefined();
        expect(Math.abs(Date.parse(String(shown.body.expires_at)) - (k.clock.now() + DAY))).toBeLessThan(60_000);

        // Added to another workspace: another key, without expiry there.
        const added = await k.call<{ api_keys: Issued[] }>('POST', `/workspaces/${second}/users`, { user_id: created.body.id, role: 'member' });
        expect(added.status).toBe(201);
        expect(added.body.api_keys).toHaveLength(1);
        const other = added.body.api_keys[0] as Issued;
        expect((await k.call<Key>('GET', `/api-keys/${other.id}`)).body).toMatchObject({ workspace_id: second, expires_at: null, pending_secret: true });
        const otherKey = String((await k.call<Key>('POST', `/api-keys/${other.id}/reveal`, undefined, issuedKey)).body.key);

        // Leaving one workspace: that workspace's key goes at once, the other stays.
        expect((await k.call('DELETE', `/workspaces/${ws}/users/${created.body.id}`)).status).toBe(204);
        expect(await authenticates(k, issuedKey)).toBe(false);
        expect((await k.call('GET', `/api-keys/${issued.id}`)).status).toBe(404);
        expect(await authenticates(k, otherKey)).toBe(true);

        // A key made by hand goes too when the user leaves the organisation.
        const byHand = await k.call<Key>('POST', '/api-keys', { name: 'manual', type: 'workspace-user', workspace_id: second, user_id: created.body.id, scopes: ['api_keys.read'] });
        expect(byHand.status).toBe(201);
        expect((await k.call('DELETE', `/users/${created.body.id}`)).status).toBe(204);
        expect(await authenticates(k, otherKey)).toBe(false);
        expect(await authenticates(k, byHand.body.key ?? '')).toBe(false);
        const left = await k.call<{ total: number }>('GET', `/api-keys?user_id=${created.body.id}`);
        expect(left.body.total).toBe(0);
      } finally {
        await settings('/settings/api-keys', { user_api_key_auto_create: false, user_api_key_rotation_period: null });
      }
    });

    test('auto-create is off by default: no key for a new member', async () => {
      const ws = await addWorkspace(k.database, k.organisationId, `off-${dialect}`);
      const created = await k.call<{ api_keys: Issued[] }>('POST', '/users', { email: `off-${dialect}@example.test`, workspaces: [{ id: ws, role: 'member' }] });
      expect(created.status).toBe(201);
      expect(created.body.api_keys).toEqual([]);
    });
  });
}
