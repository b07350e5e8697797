// GET /api-keys/self (admin/api-keys/src/self.ts): what the calling key is and may do, as the web console asks it
// (docs/console.md), on SQLite and MariaDB: the admin key, a member's key with two scopes, and refusals.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { addUser, type Json, type KeysGateway, startKeysGateway, TEST_ADMIN_KEY } from './api-keys-support.ts';

for (const dialect of DIALECTS) {
  describe(`GET /api-keys/self [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let k: KeysGateway;
    let member: string;

    beforeAll(async () => {
      k = await startKeysGateway(t.url);
      member = await addUser(k.database, k.organisationId, 'self-member@example.test', 'member', [{ workspaceId: k.workspaceId, role: 'member' }]);
    });
    afterAll(() => k?.close());

    test('the bootstrap key: an organisation-service key acting as organisation admin', async () => {
      const r = await k.call('GET', '/api-keys/self');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ object: 'api_key_self', type: 'organisation-service', organisation_id: k.organisationId, organisation_role: 'admin', workspace_role: 'admin', status: 'active' });
      expect(r.body.scopes).toContain('*');
      expect(JSON.stringify(r.body)).not.toContain(TEST_ADMIN_KEY);
    });

    test("a member's key: its own scopes and roles, not the api_keys.read scope it lacks", async () => {
      const made = await k.call<Json & { id: string; key: string }>('POST', '/api-keys', {
        name: 'member console', type: 'workspace-user', workspace_id: k.workspaceId, user_id: member, scopes: ['logs.read', 'completions.write'],
      });
      expect(made.status).toBe(201);
      const r = await k.call('GET', '/api-keys/self', undefined, made.body.key);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        object: 'api_key_self', id: made.body.id, name: 'member console', type: 'workspace-user', organisation_id: k.organisationId,
        workspace_id: k.workspaceId, user_id: member, scopes: ['logs.read', 'completions.write'], organisation_role: 'member',
        workspace_role: 'member', status: 'active', expires_at: null, key_transition_expires_at: null,
      });
      // The same key still cannot list keys: self is no back door.
      expect((await k.call('GET', '/api-keys', undefined, made.body.key)).status).toBe(403);
    });

    test('a key with a gateway-call scope only may ask too; an unknown secret is 401', async () => {
      const made = await k.call<Json & { key: string }>('POST', '/api-keys', { name: 'no scope', type: 'organisation-service', scopes: ['models.read'] });
      expect(made.status).toBe(201);
      expect((await k.call('GET', '/api-keys/self', undefined, made.body.key)).status).toBe(200);
      expect((await k.call('GET', '/api-keys/self', undefined, 'gw-not-a-key')).status).toBe(401);
    });
  });
}
