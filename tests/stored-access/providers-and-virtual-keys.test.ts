/**
 * /providers and /virtual-keys CRUD: by id or slug, workspace by id or slug, paged lists scoped to one workspace,
 * masked credentials, audit entries, and a 400 naming the field (409 for a taken slug) with nothing written.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Stack, uniqueSlug, useStack, workspaceWithKey } from './support.ts';

type ErrorBody = { error: { param: string | null; message: string } };
type Provider = { id: string; slug: string; name: string; note: string | null; integration_id: string; workspace_id: string };
type VirtualKey = { id: string; slug: string; key: string | null; configurations: Record<string, unknown>; provider: string; workspace_id: string };

async function expectRefused(s: Stack, method: string, path: string, body: unknown, status: number, param: string | null) {
  const res = await s.admin<ErrorBody>(method, path, body);
  expect({ status: res.status, param: res.body.error?.param ?? null }).toEqual({ status, param });
}

for (const dialect of E2E_DIALECTS) {
  describe(`providers and virtual keys [${dialect}]`, () => {
    const get = useStack(dialect);

    test('providers: create, read by id and slug, list per workspace, update, delete; bad input refused', async () => {
      const s = get();
      const integration = uniqueSlug('base');
      const other = await workspaceWithKey(s, ['providers.read']);
      await s.admin('POST', '/integrations', { name: 'Base', slug: integration, ai_provider_id: 'openai', create_default_provider: false, workspaces: [{ id: 'default' }, { id: other.id }] });
      const created = await s.admin<Provider>('POST', '/providers', { name: 'Prod OpenAI', integration_id: integration, workspace_id: 'default', note: 'for prod' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ slug: 'prod-openai', name: 'Prod OpenAI', note: 'for prod', workspace_id: s.defaultWorkspace });
      const same = await s.admin<Provider>('POST', '/providers', { name: 'Prod OpenAI', integration_id: integration });
      expect(same.body.slug).toBe('prod-openai-2');
      const theirs = await s.admin<Provider>('POST', '/providers', { name: 'Prod OpenAI', integration_id: integration, workspace_id: other.slug });
      expect([theirs.status, theirs.body.slug, theirs.body.workspace_id]).toEqual([201, 'prod-openai', other.id]);

      expect((await s.admin<Provider>('GET', `/providers/${created.body.id}`)).body.slug).toBe('prod-openai');
      expect((await s.admin<Provider>('GET', '/providers/prod-openai')).body.id).toBe(created.body.id);
      expect((await s.admin<Provider>('GET', `/providers/prod-openai?workspace_id=${other.slug}`)).body.id).toBe(theirs.body.id);
      const mine = await s.admin<{ data: Provider[]; total: number }>('GET', '/providers?page_size=1');
      expect([mine.body.total, mine.body.data.length]).toEqual([2, 1]);
      const listedOther = await s.admin<{ data: Provider[]; total: number }>('GET', `/providers?workspace_id=${other.id}`);
      expect(listedOther.body.data.map((p) => p.id)).toEqual([theirs.body.id]);
      // The other workspace's key sees its own, not ours.
      expect((await s.admin('GET', `/providers/${created.body.id}`, undefined, other.key)).status).toBe(404);

      const renamed = await s.admin<Provider>('PUT', `/providers/${created.body.id}`, { name: 'Renamed', slug: 'renamed-provider', note: null });
      expect(renamed.body).toMatchObject({ name: 'Renamed', slug: 'renamed-provider', note: null });
      await expectRefused(s, 'PUT', `/providers/${created.body.id}`, { slug: 'prod-openai-2' }, 409, 'slug');
      await expectRefused(s, 'PUT', `/providers/${created.body.id}`, { integration_id: 'x' }, 400, 'integration_id');

      const before = (await s.admin<{ total: number }>('GET', '/providers')).body.total;
      await expectRefused(s, 'POST', '/providers', { name: 'x' }, 400, 'integration_id');
      await expectRefused(s, 'POST', '/providers', { name: 'x', integration_id: 'no-such-integration' }, 400, 'integration_id');
      await expectRefused(s, 'POST', '/providers', { name: 'x', integration_id: integration, workspace_id: 'no-such-ws' }, 400, 'workspace_id');
      await expectRefused(s, 'POST', '/providers', { name: 'x', integration_id: integration, slug: 'Not OK' }, 400, 'slug');
      await expectRefused(s, 'POST', '/providers', { name: 'x', integration_id: integration, slug: 'anthropic' }, 400, 'slug');
      await expectRefused(s, 'POST', '/providers', { name: 'x', integration_id: integration, slug: 'renamed-provider' }, 409, 'slug');
      await expectRefused(s, 'POST', '/providers', { name: '', integration_id: integration }, 400, 'name');
      expect((await s.admin<{ total: number }>('GET', '/providers')).body.total).toBe(before);

      expect((await s.admin('DELETE', `/providers/${created.body.id}`)).status).toBe(204);
      expect((await s.admin('GET', `/providers/${created.body.id}`)).status).toBe(404);
      const audit = await s.admin<{ data: { action: string }[] }>('GET', `/audit-logs?resource=provider&resource_id=${created.body.id}`);
      expect(audit.body.data.map((e) => e.action).sort()).toEqual(['create', 'delete', 'update']);
    });

    test('virtual keys: masked, round-trips its masks, provider checked; bad input refused', async () => {
      const s = get();
      const created = await s.admin<VirtualKey>('POST', '/virtual-keys', {
        name: 'Bedrock legacy',
        provider: 'bedrock',
        configurations: { svcA_access_key_id: 'AKIAIOSFODNN7EXAMPLE', svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', svcA_region: 'us-east-1' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        slug: 'bedrock-legacy',
        key: null,
        provider: 'bedrock',
        configurations: { svcA_access_key_id: '****MPLE', svcA_secret_access_key: '****EKEY', svcA_region: 'us-east-1' },
      });
      // The masked configurations sent back, with a field changed that is not a destination, keep the stored secrets.
      const updated = await s.admin<VirtualKey>('PUT', `/virtual-keys/${created.body.slug}`, { configurations: { ...created.body.configurations, svcA_session_token: 'session-token-value-1' } });
      expect(updated.body.configurations).toEqual({ svcA_access_key_id: '****MPLE', svcA_secret_access_key: '****EKEY', svcA_region: 'us-east-1', svcA_session_token: '****ue-1' });
      // Another region sends them elsewhere: they must be entered again.
      const moved = await s.admin<{ error: { param: string } }>('PUT', `/virtual-keys/${created.body.slug}`, { configurations: { ...updated.body.configurations, svcA_region: 'eu-west-1' } });
      expect({ status: moved.status, param: moved.body.error.param }).toEqual({ status: 400, param: 'configurations.svcA_access_key_id' });
      const [row] = await s.db.query(`SELECT credentials FROM virtual_keys WHERE id = '${created.body.id}'`);
      expect(String(row?.credentials)).not.toContain('EXAMPLE');
      const listed = await s.admin<{ data: VirtualKey[] }>('GET', '/virtual-keys');
      expect(JSON.stringify(listed.body)).not.toContain('wJalrXUtnFEMI');

      const before = (await s.admin<{ total: number }>('GET', '/virtual-keys')).body.total;
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'not-a-provider' }, 400, 'provider');
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'openai', configurations: { svcA_region: 5 } }, 400, 'configurations.svcA_region');
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'openai', slug: 'bedrock-legacy' }, 409, 'slug');
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'openai', key: '' }, 400, 'key');
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'openai', workspace_id: 'nope' }, 400, 'workspace_id');
      await expectRefused(s, 'POST', '/virtual-keys', { name: 'x', provider: 'openai', secret_mappings: [{ target_field: 'configurations.x', secret_reference_id: 'r' }] }, 400, 'secret_mappings[0].target_field');
      await expectRefused(s, 'PUT', `/virtual-keys/${created.body.id}`, { provider: 'openai' }, 400, 'provider');
      expect((await s.admin<{ total: number }>('GET', '/virtual-keys')).body.total).toBe(before);
      expect((await s.admin('GET', '/virtual-keys/no-such-key')).status).toBe(404);
    });
  });
}
