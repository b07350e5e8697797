/**
 * Who may write a workspace's providers and virtual keys: workspace admins; managers while the security setting
 * managersWriteWsIntegrations is on (its default), not after it is switched off (organisation-wide or for the
 * workspace); members never. Every workspace role reads them and lists the models.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Stack, uniqueSlug, useStack } from './support.ts';

const SCOPES = ['providers.read', 'providers.write', 'providers.delete', 'virtual_keys.read', 'virtual_keys.write', 'models.read'];

/** A user with this workspace role in the default workspace, and a workspace-user key of theirs. */
async function userKey(s: Stack, role: 'admin' | 'manager' | 'member'): Promise<string> {
  const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug(role)}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role }] });
  expect(user.status).toBe(201);
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `${role} key`, type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes: SCOPES });
  expect(key.status).toBe(201);
  return key.body.key;
}

for (const dialect of E2E_DIALECTS) {
  describe(`workspace provider writes by role [${dialect}]`, () => {
    const get = useStack(dialect);

    test('admins and managers write, members read; switching managersWriteWsIntegrations off stops managers', async () => {
      const s = get();
      const slug = uniqueSlug('team');
      const created = await s.admin('POST', '/integrations', { name: 'Team', slug, ai_provider_id: 'openai', key: 'sk-team-key-0000001', workspaces: [{ id: s.defaultWorkspace }] });
      expect(created.status).toBe(201);
      const [admin, manager, member] = [await userKey(s, 'admin'), await userKey(s, 'manager'), await userKey(s, 'member')];
      const provider = (name: string) => ({ name, slug: uniqueSlug('p'), integration_id: slug });
      const vk = (name: string) => ({ name, provider: 'openai', key: 'sk-vk-role-test-000001' });

      expect((await s.admin('POST', '/providers', provider('by admin'), admin)).status).toBe(201);
      const byManager = await s.admin<{ id: string }>('POST', '/providers', provider('by manager'), manager);
      expect(byManager.status).toBe(201);
      expect((await s.admin('POST', '/virtual-keys', vk('by manager'), manager)).status).toBe(201);
      expect((await s.admin('POST', '/providers', provider('by member'), member)).status).toBe(403);
      expect((await s.admin('POST', '/virtual-keys', vk('by member'), member)).status).toBe(403);
      expect((await s.admin('GET', '/providers', undefined, member)).status).toBe(200);
      expect((await s.admin('GET', '/virtual-keys', undefined, member)).status).toBe(200);
      expect((await s.admin('GET', '/models', undefined, member)).status).toBe(200);

      const off = await s.admin('PUT', '/settings/security', { managersWriteWsIntegrations: false });
      expect(off.status).toBe(200);
      const refused = await s.admin<{ error: { message: string } }>('POST', '/providers', provider('by manager, off'), manager);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('managersWriteWsIntegrations');
      expect((await s.admin('PUT', `/providers/${byManager.body.id}`, { note: 'x' }, manager)).status).toBe(403);
      expect((await s.admin('DELETE', `/providers/${byManager.body.id}`, undefined, manager)).status).toBe(403);
      expect((await s.admin('POST', '/virtual-keys', vk('by manager, off'), manager)).status).toBe(403);
      expect((await s.admin('GET', '/providers', undefined, manager)).status).toBe(200);
      expect((await s.admin('POST', '/providers', provider('by admin, off'), admin)).status).toBe(201);

      // A workspace override turns it back on for this workspace only.
      const on = await s.admin('PUT', `/workspaces/${s.defaultWorkspace}/settings/security`, { managersWriteWsIntegrations: true });
      expect(on.status).toBe(200);
      expect((await s.admin('DELETE', `/providers/${byManager.body.id}`, undefined, manager)).status).toBe(204);
      await s.admin('PUT', '/settings/security', { managersWriteWsIntegrations: null });
      await s.admin('PUT', `/workspaces/${s.defaultWorkspace}/settings/security`, { managersWriteWsIntegrations: null });
    });
  });
}
