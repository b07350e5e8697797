/**
 * Secret mappings on integrations and virtual keys, with the real secret-references plugin and a local Vault: the
 * mapped value is fetched at request time (a rotated secret reaches requests once the reference cache expires), a
 * reference the workspace may not use is refused at write time, and a mapping to an unknown reference is a 400.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';
import { lastAuthorization, uniqueSlug, useStack, workspaceWithKey } from './support.ts';

const TOKEN = 'hvs.stored-access-token';
const vault = startVault({ tokens: [TOKEN] });
afterAll(() => vault.stop());

for (const dialect of E2E_DIALECTS) {
  describe(`secret mappings [${dialect}]`, () => {
    const get = useStack(dialect, { SECRET_REFERENCES_CACHE_TTL_MS: '200' });

    test('an integration key from Vault, fetched at request time, rotated within the cache lifetime', async () => {
      const s = get();
      const path = `team/${uniqueSlug('openai')}`;
      vault.write(path, { api_key: 'sk-from-vault-000001', org: 'org-x' });
      const ref = await s.admin<{ id: string }>('POST', '/secret-references', {
        name: 'Vault OpenAI',
        slug: uniqueSlug('vault-ref'),
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: TOKEN },
        secret_path: path,
        allow_all_workspaces: true,
      });
      expect(ref.status).toBe(201);
      const slug = uniqueSlug('mapped');
      const created = await s.admin<{ key: string | null; secret_mappings: unknown }>('POST', '/integrations', {
        name: 'Mapped',
        slug,
        ai_provider_id: 'openai',
        configurations: { custom_host: s.mock.url },
        secret_mappings: [
          { target_field: 'key', secret_reference_id: ref.body.id, secret_key: 'api_key' },
          { target_field: 'configurations.svcD_organization', secret_reference_id: ref.body.id, secret_key: 'org' },
        ],
        workspaces: [{ id: 'default' }],
      });
      expect(created.status).toBe(201);
      expect(created.body.key).toBeNull();

      expect((await s.chat({ 'x-gateway-provider': `@${slug}` })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-from-vault-000001');
      expect(s.mock.requests.at(-1)?.headers['openai-organization']).toBe('org-x');

      vault.write(path, { api_key: 'sk-from-vault-000002', org: 'org-x' });
      await Bun.sleep(300);
      expect((await s.chat({ 'x-gateway-provider': `@${slug}` })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-from-vault-000002');
    });

    test('a virtual key mapped to a reference of its workspace only; refused at write time elsewhere', async () => {
      const s = get();
      const other = await workspaceWithKey(s);
      const path = `team/${uniqueSlug('vk')}`;
      vault.write(path, { value: 'sk-vk-from-vault-0003' });
      const ref = await s.admin<{ id: string }>('POST', '/secret-references', {
        name: 'Only default',
        slug: uniqueSlug('only-default'),
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: TOKEN },
        secret_path: path,
        secret_key: 'value',
        allowed_workspaces: [s.defaultWorkspace],
      });
      expect(ref.status).toBe(201);
      const mapping = [{ target_field: 'key', secret_reference_id: ref.body.id }];
      const vk = await s.admin<{ slug: string }>('POST', '/virtual-keys', { name: 'Mapped vk', provider: 'openai', configurations: { custom_host: s.mock.url }, secret_mappings: mapping });
      expect(vk.status).toBe(201);
      expect((await s.chat({ 'x-gateway-virtual-key': vk.body.slug })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-vk-from-vault-0003');

      const refused = await s.admin('POST', '/virtual-keys', { name: 'Elsewhere', provider: 'openai', workspace_id: other.id, secret_mappings: mapping });
      expect(refused.status).toBe(403);
      // An integration whose workspaces include one the reference does not allow: refused, and so is a later grant.
      const slug = uniqueSlug('limited');
      expect((await s.admin('POST', '/integrations', { name: 'Limited', slug, ai_provider_id: 'openai', secret_mappings: mapping, workspaces: [{ id: other.id }] })).status).toBe(403);
      expect((await s.admin('POST', '/integrations', { name: 'Limited', slug, ai_provider_id: 'openai', secret_mappings: mapping, workspaces: [{ id: 'default' }] })).status).toBe(201);
      expect((await s.admin('PUT', `/integrations/${slug}/workspaces`, { workspaces: [{ id: other.id }] })).status).toBe(403);

      const unknown = await s.admin<{ error: { param: string } }>('POST', '/virtual-keys', {
        name: 'Unknown ref',
        provider: 'openai',
        secret_mappings: [{ target_field: 'key', secret_reference_id: 'no-such-reference' }],
      });
      expect([unknown.status, unknown.body.error.param]).toEqual([400, 'secret_mappings[0].secret_reference_id']);
    });
  });
}
