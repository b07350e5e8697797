/**
 * Requests through stored credentials reach the right provider with the right key: `@slug` in the header, in a
 * config's provider and in a passthrough model; virtual keys by slug and by id; a workspace without access gets
 * 403; an unknown slug the unknown-provider 400; per-model custom hosts and disabled models.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { lastAuthorization, type Stack, uniqueSlug, useStack, workspaceWithKey } from './support.ts';

async function integration(s: Stack, body: Record<string, unknown>) {
  const res = await s.admin<{ id: string; slug: string; default_providers: { id: string; slug: string; workspace_id: string }[] }>('POST', '/integrations', body);
  expect(res.status).toBe(201);
  return res.body;
}

for (const dialect of E2E_DIALECTS) {
  describe(`stored access over the gateway [${dialect}]`, () => {
    const get = useStack(dialect);

    test('@slug in the header, in a config and in a passthrough model reaches the provider with the stored key', async () => {
      const s = get();
      const slug = uniqueSlug('team-openai');
      const created = await integration(s, {
        name: 'Team OpenAI',
        slug,
        ai_provider_id: 'openai',
        key: 'sk-integration-secret-0001',
        configurations: { custom_host: s.mock.url },
        workspaces: [{ id: s.defaultWorkspace, enabled: true }],
      });
      expect(created.default_providers).toEqual([{ id: expect.any(String), slug, workspace_id: s.defaultWorkspace }]);

      const viaHeader = await s.chat({ 'x-gateway-provider': `@${slug}` });
      expect(viaHeader.status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-integration-secret-0001');

      s.mock.reset();
      const viaConfig = await s.chat({ 'x-gateway-config': JSON.stringify({ provider: `@${slug}` }) });
      expect(viaConfig.status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-integration-secret-0001');

      s.mock.reset();
      const viaModel = await s.chat(
        { 'x-gateway-config': JSON.stringify({ passthrough: true }) },
        { model: `@${slug}/gpt-4o-mini`, messages: [{ role: 'user', content: 'hi' }] },
      );
      expect(viaModel.status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-integration-secret-0001');
      expect((s.mock.requests.at(-1)?.json as { model?: string }).model).toBe('gpt-4o-mini');
    });

    test('a workspace without access is refused with 403; an unknown slug is the unknown-provider 400', async () => {
      const s = get();
      const slug = uniqueSlug('private-openai');
      await integration(s, {
        name: 'Private',
        slug,
        ai_provider_id: 'openai',
        key: 'sk-private-000000000001',
        configurations: { custom_host: s.mock.url },
        workspaces: [{ id: s.defaultWorkspace }],
      });
      const other = await workspaceWithKey(s);
      s.mock.reset();
      const refused = await s.chat({ 'x-gateway-api-key': other.key, 'x-gateway-provider': `@${slug}` });
      expect(refused.status).toBe(403);
      expect((refused.body.error as { type: string }).type).toBe('permission_error');
      expect(s.mock.requests).toHaveLength(0);

      const unknown = await s.chat({ 'x-gateway-provider': '@no-such-provider-anywhere' });
      expect(unknown.status).toBe(400);
      expect((unknown.body.error as { code: string }).code).toBe('unknown_provider');

      // Access withdrawn: the default workspace's own provider is refused too.
      const off = await s.admin('PUT', `/integrations/${slug}/workspaces`, { workspaces: [{ id: s.defaultWorkspace, enabled: false }] });
      expect(off.status).toBe(200);
      expect((await s.chat({ 'x-gateway-provider': `@${slug}` })).status).toBe(403);

      // Granted to the other workspace: it gets its own default provider and may call.
      const on = await s.admin('PUT', `/integrations/${slug}/workspaces`, { workspaces: [{ id: other.id, enabled: true }] });
      expect(on.status).toBe(200);
      expect((await s.chat({ 'x-gateway-api-key': other.key, 'x-gateway-provider': `@${slug}` })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-private-000000000001');
    });

    test('a key change is used by the next request; the masked key sent back keeps the stored one', async () => {
      const s = get();
      const slug = uniqueSlug('rotating');
      await integration(s, { name: 'Rotating', slug, ai_provider_id: 'openai', key: 'sk-first-key-00000001', configurations: { custom_host: s.mock.url }, workspaces: [{ id: 'default' }] });
      const read = await s.admin<{ key: string; configurations: Record<string, unknown> }>('GET', `/integrations/${slug}`);
      expect(read.body.key).toBe('****0001');
      const same = await s.admin('PUT', `/integrations/${slug}`, { key: read.body.key, configurations: read.body.configurations, description: 'same key' });
      expect(same.status).toBe(200);
      await s.chat({ 'x-gateway-provider': `@${slug}` });
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-first-key-00000001');

      expect((await s.admin('PUT', `/integrations/${slug}`, { key: 'sk-second-key-0000002' })).status).toBe(200);
      await s.chat({ 'x-gateway-provider': `@${slug}` });
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-second-key-0000002');

      expect((await s.admin('DELETE', `/integrations/${slug}`)).status).toBe(204);
      const gone = await s.chat({ 'x-gateway-provider': `@${slug}` });
      expect(gone.status).toBe(400);
      expect((gone.body.error as { code: string }).code).toBe('unknown_provider');
    });

    test('a workspace provider over an integration: its own slug, and another workspace cannot use it', async () => {
      const s = get();
      const slug = uniqueSlug('shared');
      const other = await workspaceWithKey(s);
      await integration(s, {
        name: 'Shared',
        slug,
        ai_provider_id: 'openai',
        key: 'sk-shared-key-00000003',
        configurations: { custom_host: s.mock.url },
        create_default_provider: false,
        workspaces: [{ id: s.defaultWorkspace }],
      });
      const mine = uniqueSlug('mine');
      const created = await s.admin<{ slug: string; integration_slug: string; ai_provider_id: string }>('POST', '/providers', { name: 'Mine', slug: mine, integration_id: slug });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ slug: mine, integration_slug: slug, ai_provider_id: 'openai' });
      expect((await s.chat({ 'x-gateway-provider': `@${mine}` })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-shared-key-00000003');
      expect((await s.chat({ 'x-gateway-api-key': other.key, 'x-gateway-provider': `@${mine}` })).status).toBe(403);
      // The other workspace may not build a provider on an integration it has no access to.
      const refused = await s.admin('POST', '/providers', { name: 'Theirs', integration_id: slug, workspace_id: other.id });
      expect(refused.status).toBe(403);
    });

    test('per-model custom host and disabled models', async () => {
      const s = get();
      const slug = uniqueSlug('per-model');
      const { startOpenAIMock } = await import('../mocks/openai-server.ts');
      const second = await startOpenAIMock({ apiKey: null });
      try {
        await integration(s, { name: 'Per model', slug, ai_provider_id: 'openai', key: 'sk-per-model-0000004', configurations: { custom_host: s.mock.url }, workspaces: [{ id: 'default' }] });
        const models = await s.admin('PUT', `/integrations/${slug}/integration-models`, {
          models: [
            { slug: 'gpt-4o', enabled: true, configurations: { custom_host: second.url } },
            { slug: 'gpt-3.5-turbo', enabled: false },
          ],
          // A model's own host takes the integration's key elsewhere: the key is entered again.
          key: 'sk-per-model-0000004',
        });
        expect(models.status).toBe(200);
        s.mock.reset();
        const routed = await s.chat({ 'x-gateway-provider': `@${slug}` }, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
        expect(routed.status).toBe(200);
        expect(second.requests).toHaveLength(1);
        expect(second.requests[0]?.headers.authorization).toBe('Bearer sk-per-model-0000004');
        expect(s.mock.requests).toHaveLength(0);
        const disabled = await s.chat({ 'x-gateway-provider': `@${slug}` }, { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] });
        expect(disabled.status).toBe(403);
        const other = await s.chat({ 'x-gateway-provider': `@${slug}` });
        expect(other.status).toBe(200);
        expect(s.mock.requests).toHaveLength(1);
      } finally {
        await second.stop();
      }
    });

    test('a custom host named by the request never receives stored credentials', async () => {
      const s = get();
      const { startOpenAIMock } = await import('../mocks/openai-server.ts');
      const elsewhere = await startOpenAIMock({ apiKey: null });
      try {
        const slug = uniqueSlug('pinned');
        await integration(s, { name: 'Pinned', slug, ai_provider_id: 'openai', key: 'sk-pinned-00000000007', configurations: { custom_host: s.mock.url }, workspaces: [{ id: 'default' }] });
        const vk = await s.admin<{ slug: string }>('POST', '/virtual-keys', { name: 'Pinned vk', provider: 'openai', key: 'sk-pinned-vk-0000008', configurations: { custom_host: s.mock.url } });
        s.mock.reset();
        expect((await s.chat({ 'x-gateway-provider': `@${slug}`, 'x-gateway-custom-host': elsewhere.url })).status).toBe(200);
        expect((await s.chat({ 'x-gateway-config': JSON.stringify({ provider: `@${slug}`, custom_host: elsewhere.url }) })).status).toBe(200);
        expect((await s.chat({ 'x-gateway-virtual-key': vk.body.slug, 'x-gateway-custom-host': elsewhere.url })).status).toBe(200);
        expect(elsewhere.requests).toHaveLength(0);
        expect(s.mock.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-pinned-00000000007', 'Bearer sk-pinned-00000000007', 'Bearer sk-pinned-vk-0000008']);
      } finally {
        await elsewhere.stop();
      }
    });

    test('virtual keys: by slug in the header and in a config, by id; refused to another workspace', async () => {
      const s = get();
      const slug = uniqueSlug('vk');
      const created = await s.admin<{ id: string; slug: string; key: string }>('POST', '/virtual-keys', {
        name: 'Legacy key',
        slug,
        provider: 'openai',
        key: 'sk-virtual-key-0000005',
        configurations: { custom_host: s.mock.url },
      });
      expect(created.status).toBe(201);
      expect(created.body.key).toBe('****0005');

      expect((await s.chat({ 'x-gateway-virtual-key': slug })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-virtual-key-0000005');
      s.mock.reset();
      expect((await s.chat({ 'x-gateway-config': JSON.stringify({ virtual_key: created.body.id }) })).status).toBe(200);
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-virtual-key-0000005');

      const other = await workspaceWithKey(s);
      s.mock.reset();
      expect((await s.chat({ 'x-gateway-api-key': other.key, 'x-gateway-virtual-key': slug })).status).toBe(403);
      expect((await s.chat({ 'x-gateway-api-key': other.key, 'x-gateway-virtual-key': created.body.id })).status).toBe(403);
      expect(s.mock.requests).toHaveLength(0);
      const unknown = await s.chat({ 'x-gateway-virtual-key': 'vk-that-does-not-exist' });
      expect(unknown.status).toBe(400);

      expect((await s.admin('PUT', `/virtual-keys/${slug}`, { key: 'sk-virtual-key-0000006' })).status).toBe(200);
      await s.chat({ 'x-gateway-virtual-key': slug });
      expect(lastAuthorization(s.mock)).toBe('Bearer sk-virtual-key-0000006');
      expect((await s.admin('DELETE', `/virtual-keys/${created.body.id}`)).status).toBe(204);
      expect((await s.chat({ 'x-gateway-virtual-key': slug })).status).toBe(400);
    });
  });
}
