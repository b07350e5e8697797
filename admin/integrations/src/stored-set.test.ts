/**
 * The in-memory set on a real database of each dialect: credentials opened once per load (never per request), answers
 * synchronous without secret mappings, a credential sealed under another key refused alone, and the lookups the
 * hot path makes (provider slug, integration slug, virtual key by slug and id; 403 across workspaces).
 */
import { describe, expect, test } from 'bun:test';
import { type SealedAt, SecretBox } from '@gateway/admin-kit';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type Caller, GatewayError } from '@gateway/sdk';
import { createStoredAccess } from './stored-access.ts';
import { loadStoredSet } from './stored-set.ts';
import {
  integrationCredentialsAt,
  integrationModels,
  integrationMigrations,
  integrations,
  integrationWorkspaces,
  virtualKeyCredentialsAt,
  virtualKeys,
  workspaceProviders,
} from './tables.ts';
import { thrown } from '@gateway/admin-kit/testing';

class CountingBox extends SecretBox {
  opens = 0;
  override openJson<T>(sealed: string, at: SealedAt): T {
    this.opens++;
    return super.openJson<T>(sealed, at);
  }
}

const ORG = 'org-1';
const caller = (workspaceId: string, organisationId = ORG): Caller => ({
  apiKeyId: 'k',
  organisationId,
  workspaceId,
  scopes: ['completions.write'],
  keyType: 'workspace-service',
  userId: null,
});

for (const dialect of DIALECTS) {
  describe(`stored set [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('resolution from memory, credentials opened once per load', async () => {
      const { database } = await t.fresh();
      await database.migrate(integrationMigrations);
      const box = new CountingBox('a-test-key-of-enough-length');
      const other = new SecretBox('another-key-of-enough-length');
      const now = Date.now();
      const integration = (id: string, slug: string, sealed: string) => ({
        id,
        organisation_id: ORG,
        name: slug,
        slug,
        ai_provider_id: 'openai',
        credentials: sealed,
        created_at: now,
        updated_at: now,
      });
      await database.insert(integrations, [
        integration('i-1', 'team', box.sealJson({ key: 'sk-team', configurations: { custom_host: 'http://127.0.0.1:1/v1' } }, integrationCredentialsAt('i-1'))),
        integration('i-2', 'foreign', other.sealJson({ key: 'sk-foreign', configurations: {} }, integrationCredentialsAt('i-2'))),
      ]);
      await database.insert(integrationWorkspaces, [
        { organisation_id: ORG, integration_id: 'i-1', workspace_id: 'ws-a', enabled: true },
        { organisation_id: ORG, integration_id: 'i-1', workspace_id: 'ws-b', enabled: false },
        { organisation_id: ORG, integration_id: 'i-2', workspace_id: 'ws-a', enabled: true },
      ]);
      await database.insert(integrationModels, { organisation_id: ORG, integration_id: 'i-1', slug: 'gpt-4o', enabled: true, configurations: { custom_host: 'http://127.0.0.1:2/v1' } });
      await database.insert(workspaceProviders, [
        { organisation_id: ORG, workspace_id: 'ws-a', integration_id: 'i-1', name: 'p', slug: 'prod' },
        { organisation_id: ORG, workspace_id: 'ws-b', integration_id: 'i-1', name: 'p', slug: 'prod-b' },
      ]);
      await database.insert(virtualKeys, {
        id: 'vk-1',
        organisation_id: ORG,
        workspace_id: 'ws-a',
        name: 'v',
        slug: 'legacy',
        ai_provider_id: 'anthropic',
        credentials: box.sealJson({ key: 'sk-ant-legacy', configurations: {} }, virtualKeyCredentialsAt('vk-1')),
      });

      const set = await loadStoredSet(database, box);
      expect(box.opens).toBe(3); // each sealed value once (the foreign one fails to open)
      const access = createStoredAccess({ current: () => set, secrets: () => undefined });

      const a = caller('ws-a');
      for (let i = 0; i < 1000; i++) access.providerSlug('prod', a);
      expect(box.opens).toBe(3);

      const hit = access.providerSlug('prod', a);
      expect(hit).not.toBeInstanceOf(Promise);
      expect(hit).toEqual({ provider: 'openai', target: { provider: 'openai', api_key: 'sk-team', custom_host: 'http://127.0.0.1:1/v1' }, integrationId: expect.any(String) });
      expect(access.providerSlug('prod', a, 'gpt-4o')).toEqual({
        provider: 'openai',
        target: { provider: 'openai', api_key: 'sk-team', custom_host: 'http://127.0.0.1:2/v1' },
        integrationId: expect.any(String),
      });
      // The integration slug itself, for a workspace with access.
      expect(access.providerSlug('team', a)).toMatchObject({ provider: 'openai' });
      // ws-b has a provider but its access is disabled; ws-c has nothing but the slug exists in the organisation.
      expect(thrown(() => access.providerSlug('prod-b', caller('ws-b'))).status).toBe(403);
      expect(thrown(() => access.providerSlug('prod', caller('ws-c'))).status).toBe(403);
      expect(thrown(() => access.providerSlug('team', caller('ws-c'))).status).toBe(403);
      expect(access.providerSlug('nothing', a)).toBeUndefined();
      // Another organisation knows none of it.
      expect(access.providerSlug('prod', caller('ws-x', 'org-2'))).toBeUndefined();
      // Sealed under another key: refused alone, with a 500 that says why.
      const broken = thrown(() => access.providerSlug('foreign', a));
      expect(broken.status).toBe(500);

      expect(access.virtualKey('legacy', a)).toEqual({ provider: 'anthropic', api_key: 'sk-ant-legacy' });
      expect(access.virtualKey('vk-1', a)).toEqual({ provider: 'anthropic', api_key: 'sk-ant-legacy' });
      expect(thrown(() => access.virtualKey('legacy', caller('ws-b'))).status).toBe(403);
      expect(thrown(() => access.virtualKey('vk-1', caller('ws-b'))).status).toBe(403);
      expect(access.virtualKey('vk-1', caller('ws-x', 'org-2'))).toBeUndefined();
      expect(access.virtualKey('none', a)).toBeUndefined();
      // The answers are frozen: no request can change what the next one gets.
      expect(Object.isFrozen(access.virtualKey('legacy', a))).toBe(true);
    });

    test('mappings without the secret-references service: a clear 500, as a promise', async () => {
      const { database } = await t.fresh();
      await database.migrate(integrationMigrations);
      const box = new SecretBox('a-test-key-of-enough-length');
      await database.insert(virtualKeys, {
        id: 'vk-mapped',
        organisation_id: ORG,
        workspace_id: 'ws-a',
        name: 'v',
        slug: 'mapped',
        ai_provider_id: 'openai',
        credentials: box.sealJson({ configurations: {} }, virtualKeyCredentialsAt('vk-mapped')),
        secret_mappings: [{ target_field: 'key', secret_reference_id: 'ref' }],
      });
      const set = await loadStoredSet(database, box);
      const access = createStoredAccess({ current: () => set, secrets: () => undefined });
      const pending = access.virtualKey('mapped', caller('ws-a'));
      expect(pending).toBeInstanceOf(Promise);
      const error = await Promise.resolve(pending).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).message).toContain('secret references');
    });
  });
}
