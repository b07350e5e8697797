/**
 * The /integrations routes over the gateway: credentials sealed at rest and masked in answers (the role ARN in
 * clear), pricing adjustments, the Entra federated mode, default providers, workspace access, integration models,
 * who may call them, the audit trail, and a 400 naming the field for every kind of bad input with nothing written.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Stack, uniqueSlug, useStack, workspaceWithKey } from './support.ts';

type Integration = {
  id: string;
  slug: string;
  key: string | null;
  configurations: Record<string, unknown>;
  pricing_adjustments: unknown;
  auth_mode: string | null;
  default_provider_slug: string | null;
  default_providers: { id: string; slug: string; workspace_id: string }[];
  workspaces: { id: string; enabled: boolean }[];
};
type ErrorBody = { error: { message: string; type: string; code: string; param: string | null } };

const count = async (s: Stack) => (await s.admin<{ total: number }>('GET', '/integrations')).body.total;

async function refused(s: Stack, body: Record<string, unknown>, param: string, status = 400) {
  const before = await count(s);
  const res = await s.admin<ErrorBody>('POST', '/integrations', body);
  expect({ status: res.status, param: res.body.error?.param }).toEqual({ status, param });
  expect(await count(s)).toBe(before);
  return res.body.error.message;
}

for (const dialect of E2E_DIALECTS) {
  describe(`integrations [${dialect}]`, () => {
    const get = useStack(dialect);

    test('credentials are sealed at rest and masked in every answer', async () => {
      const s = get();
      const slug = uniqueSlug('sealed');
      const created = await s.admin<Integration>('POST', '/integrations', {
        name: 'Sealed',
        slug,
        ai_provider_id: 'openai',
        key: 'sk-live-sealed-abcd',
        configurations: { custom_host: 'https://llm.example.com/v1', svcD_organization: 'org-1' },
        description: 'prod',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ slug, key: '****abcd', configurations: { custom_host: 'https://llm.example.com/v1', svcD_organization: 'org-1' } });
      const one = await s.admin<Integration>('GET', `/integrations/${created.body.id}`);
      expect(one.body.key).toBe('****abcd');
      const all = await s.admin<{ data: Integration[] }>('GET', '/integrations');
      expect(all.body.data.find((i) => i.slug === slug)?.key).toBe('****abcd');
      expect(JSON.stringify(all.body)).not.toContain('sk-live-sealed-abcd');
      const [row] = await s.db.query(`SELECT credentials FROM integrations WHERE slug = '${slug}'`);
      expect(String(row?.credentials)).toMatch(/^v2:/);
      expect(String(row?.credentials)).not.toContain('sealed-abcd');
    });

    test('bedrock: the role ARN is shown unmasked, the AWS keys masked', async () => {
      const s = get();
      const arn = 'arn:aws:iam::123456789012:role/gateway-bedrock';
      const created = await s.admin<Integration>('POST', '/integrations', {
        name: 'Bedrock',
        ai_provider_id: 'bedrock',
        configurations: { svcA_access_key_id: 'AKIAIOSFODNN7EXAMPLE', svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', svcA_region: 'eu-west-1', svcA_role_arn: arn },
      });
      expect(created.status).toBe(201);
      const read = await s.admin<{ data: Integration[] }>('GET', '/integrations?ai_provider_id=bedrock');
      const shown = read.body.data[0]?.configurations;
      expect(shown).toEqual({ svcA_access_key_id: '****MPLE', svcA_secret_access_key: '****EKEY', svcA_region: 'eu-west-1', svcA_role_arn: arn });
      await refused(s, { name: 'Bad ARN', ai_provider_id: 'bedrock', configurations: { svcA_role_arn: 'arn:aws:s3:::bucket' } }, 'configurations.svcA_role_arn');
    });

    test('pricing adjustments: positive multipliers per token kind, stored and returned; anything else a 400', async () => {
      const s = get();
      const pricing = { multiplier: { request_token: 1.2, response_token: 0.8, cache_read_input_token: 0.5, request_audio_token: 2, reasoning_token: 1.5 } };
      const created = await s.admin<Integration>('POST', '/integrations', { name: 'Priced', ai_provider_id: 'openai', key: 'sk-priced-000000001', pricing_adjustments: pricing });
      expect(created.status).toBe(201);
      expect((await s.admin<Integration>('GET', `/integrations/${created.body.id}`)).body.pricing_adjustments).toEqual(pricing);
      await refused(s, { name: 'Neg', ai_provider_id: 'openai', pricing_adjustments: { multiplier: { request_token: -1 } } }, 'pricing_adjustments.multiplier.request_token');
      await refused(s, { name: 'Zero', ai_provider_id: 'openai', pricing_adjustments: { multiplier: { response_token: 0 } } }, 'pricing_adjustments.multiplier.response_token');
      await refused(s, { name: 'Kind', ai_provider_id: 'openai', pricing_adjustments: { multiplier: { bogus_token: 1 } } }, 'pricing_adjustments.multiplier.bogus_token');
      const cleared = await s.admin<Integration>('PUT', `/integrations/${created.body.id}`, { pricing_adjustments: null });
      expect(cleared.body.pricing_adjustments).toBeNull();
    });

    test('auth_mode entraFederated: Azure only, tenant and client id required, no client secret', async () => {
      const s = get();
      const ok = await s.admin<Integration>('POST', '/integrations', {
        name: 'Azure federated',
        ai_provider_id: 'azure-openai',
        auth_mode: 'entraFederated',
        configurations: { resource_name: 'contoso', svcB_entra_tenant_id: 'contoso.onmicrosoft.com', svcB_entra_client_id: '00000000-0000-0000-0000-000000000001' },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.auth_mode).toBe('entraFederated');
      const azure = { name: 'Azure', ai_provider_id: 'azure-openai', auth_mode: 'entraFederated' };
      await refused(s, { ...azure, configurations: { svcB_entra_tenant_id: 't' } }, 'configurations.svcB_entra_client_id');
      await refused(
        s,
        { ...azure, configurations: { svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c', svcB_entra_client_secret: 'shh-secret-value' } },
        'configurations.svcB_entra_client_secret',
      );
      await refused(s, { name: 'Not azure', ai_provider_id: 'openai', auth_mode: 'entraFederated' }, 'auth_mode');
      await refused(s, { ...azure, auth_mode: 'somethingElse' }, 'auth_mode');
    });

    test('bad input: a 400 naming the field, nothing written', async () => {
      const s = get();
      const taken = uniqueSlug('taken');
      expect((await s.admin('POST', '/integrations', { name: 'Taken', slug: taken, ai_provider_id: 'openai' })).status).toBe(201);
      await refused(s, { name: 'x', ai_provider_id: 'no-such-provider' }, 'ai_provider_id');
      await refused(s, { name: 'x', ai_provider_id: 'openai', slug: 'Bad Slug!' }, 'slug');
      await refused(s, { name: 'x', ai_provider_id: 'openai', slug: 'openai' }, 'slug');
      await refused(s, { name: 'x', ai_provider_id: 'openai', slug: taken }, 'slug', 409);
      await refused(s, { name: 'x', ai_provider_id: 'openai', configurations: { not_a_field: 1 } }, 'configurations.not_a_field');
      await refused(s, { name: 'x', ai_provider_id: 'openai', configurations: { custom_host: 'not a url' } }, 'configurations.custom_host');
      await refused(s, { name: 'x', ai_provider_id: 'openai', workspaces: [{ id: 'no-such-workspace' }] }, 'workspaces[0].id');
      await refused(s, { name: 'x', ai_provider_id: 'openai', create_default_provider: false, default_provider_slug: 'p-1' }, 'default_provider_slug');
      await refused(s, { ai_provider_id: 'openai' }, 'name');
      await refused(s, { name: 'x', ai_provider_id: 'openai', secret_mappings: [{ target_field: 'nowhere', secret_reference_id: 'r' }] }, 'secret_mappings[0].target_field');
      const badJson = await s.gw.handle(
        new Request('http://gateway/v1/integrations', { method: 'POST', headers: { 'x-gateway-api-key': 'gw-test-admin-key-0123456789abcdef', 'content-type': 'application/json' }, body: '{' }),
      );
      expect(badJson.status).toBe(400);
    });

    test('default providers: one per workspace given access, a custom slug, none when switched off; a clash writes nothing', async () => {
      const s = get();
      const other = await workspaceWithKey(s);
      const slug = uniqueSlug('defaults');
      const created = await s.admin<Integration>('POST', '/integrations', {
        name: 'Defaults',
        slug,
        ai_provider_id: 'openai',
        default_provider_slug: `${slug}-p`,
        workspaces: [{ id: s.defaultWorkspace }, { id: other.slug, enabled: false }],
      });
      expect(created.status).toBe(201);
      expect(created.body.default_providers.map((p) => [p.slug, p.workspace_id])).toEqual([[`${slug}-p`, s.defaultWorkspace]]);
      // Each access shows its limits for the integration, as GET /integrations/:id/workspaces does (none given: null).
      expect(created.body.workspaces).toEqual([
        { id: s.defaultWorkspace, slug: 'default', enabled: true, usage_limits: null, rate_limits: null },
        { id: other.id, slug: other.slug, enabled: false, usage_limits: null, rate_limits: null },
      ] as never);
      const access = await s.admin<{ data: { id: string; enabled: boolean }[] }>('GET', `/integrations/${created.body.id}/workspaces`);
      expect(access.body.data.map((a) => [a.id, a.enabled]).sort()).toEqual(
        [
          [s.defaultWorkspace, true],
          [other.id, false],
        ].sort(),
      );

      const off = await s.admin<Integration>('POST', '/integrations', { name: 'No default', ai_provider_id: 'openai', create_default_provider: false, workspaces: [{ id: 'default' }] });
      expect(off.body.default_providers).toEqual([]);
      expect(off.body.default_provider_slug).toBeNull();

      // Another integration wanting the same provider slug in the same workspace: 409, and no integration is left.
      await refused(s, { name: 'Clash', ai_provider_id: 'openai', default_provider_slug: `${slug}-p`, workspaces: [{ id: 'default' }] }, 'default_provider_slug', 409);
      const providers = await s.admin<{ data: { slug: string }[] }>('GET', '/providers?page_size=1000');
      expect(providers.body.data.filter((p) => p.slug === `${slug}-p`)).toHaveLength(1);
    });

    test('integration models: upsert, list, a non-empty configurations object with a valid custom host', async () => {
      const s = get();
      const created = await s.admin<Integration>('POST', '/integrations', { name: 'Models', ai_provider_id: 'openai' });
      const path = `/integrations/${created.body.id}/integration-models`;
      const put = await s.admin<{ data: { slug: string; enabled: boolean; configurations: unknown }[] }>('PUT', path, {
        models: [{ slug: 'gpt-4o', enabled: true, configurations: { custom_host: 'https://eu.example.com/v1' } }, { slug: 'gpt-4o-mini', enabled: false }],
      });
      expect(put.status).toBe(200);
      expect(put.body.data.map((m) => [m.slug, m.enabled, m.configurations])).toEqual([
        ['gpt-4o', true, { custom_host: 'https://eu.example.com/v1' }],
        ['gpt-4o-mini', false, null],
      ]);
      const again = await s.admin('PUT', path, { models: [{ slug: 'gpt-4o-mini', enabled: true }] });
      expect(again.status).toBe(200);
      const listed = await s.admin<{ data: { slug: string; enabled: boolean }[]; total: number }>('GET', `${path}?page_size=1`);
      expect(listed.body.total).toBe(2);
      expect(listed.body.data).toHaveLength(1);
      for (const [models, param] of [
        [[{ slug: 'm', configurations: {} }], 'models[0].configurations'],
        [[{ slug: 'm', configurations: { custom_host: 'not a url' } }], 'models[0].configurations.custom_host'],
        [[{ slug: 'm', configurations: { custom_host: 'ftp://x.example.com' } }], 'models[0].configurations.custom_host'],
        [[{ slug: 'm', configurations: { other: 1 } }], 'models[0].configurations.other'],
        [[], 'models'],
      ] as const) {
        const res = await s.admin<ErrorBody>('PUT', path, { models });
        expect({ status: res.status, param: res.body.error.param }).toEqual({ status: 400, param });
      }
      expect((await s.admin<{ total: number }>('GET', path)).body.total).toBe(2);
    });

    test('organisation owners and admins only; a key without the scope is refused', async () => {
      const s = get();
      const ws = await workspaceWithKey(s, ['integrations.read', 'integrations.write']);
      expect((await s.admin('GET', '/integrations', undefined, ws.key)).status).toBe(403);
      expect((await s.admin('POST', '/integrations', { name: 'x', ai_provider_id: 'openai' }, ws.key)).status).toBe(403);
      const orgKey = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'org read', type: 'organisation-service', scopes: ['integrations.read'] });
      expect((await s.admin('GET', '/integrations', undefined, orgKey.body.key)).status).toBe(200);
      expect((await s.admin('POST', '/integrations', { name: 'x', ai_provider_id: 'openai' }, orgKey.body.key)).status).toBe(403);
      expect((await s.admin('DELETE', '/integrations/whatever', undefined, orgKey.body.key)).status).toBe(403);
    });

    test('every change is audited, without the secrets', async () => {
      const s = get();
      const slug = uniqueSlug('audited');
      const created = await s.admin<Integration>('POST', '/integrations', { name: 'Audited', slug, ai_provider_id: 'openai', key: 'sk-audit-secret-9999', configurations: { svcD_project: 'p' } });
      await s.admin('PUT', `/integrations/${slug}`, { key: 'sk-audit-secret-8888', description: 'changed' });
      await s.admin('PUT', `/integrations/${slug}/integration-models`, { models: [{ slug: 'gpt-4o' }] });
      await s.admin('PUT', `/integrations/${slug}/workspaces`, { workspaces: [{ id: 'default' }] });
      await s.admin('DELETE', `/integrations/${slug}`);
      const logs = await s.admin<{ data: { resource: string; action: string; resource_id: string; before: unknown; after: unknown }[] }>(
        'GET',
        `/audit-logs?resource_id=${created.body.id}&page_size=100`,
      );
      expect(logs.status).toBe(200);
      expect(logs.body.data.map((e) => `${e.resource}:${e.action}`).sort()).toEqual(
        ['integration:create', 'integration:update', 'integration_models:update', 'integration_workspaces:update', 'integration:delete'].sort(),
      );
      const text = JSON.stringify(logs.body);
      expect(text).not.toContain('audit-secret');
      expect(text).not.toContain('****');
      const update = logs.body.data.find((e) => e.resource === 'integration' && e.action === 'update');
      expect(update?.after).toMatchObject({ slug, description: 'changed' });
    });
  });
}
