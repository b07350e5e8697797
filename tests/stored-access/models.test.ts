/**
 * GET /models without a provider chosen: the enabled models of the integrations the caller's workspace reaches,
 * one entry per `@slug/model`, filtered by provider, integration and name, `total_count` after filtering, paged.
 * With x-gateway-provider it is still the provider's own list.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { uniqueSlug, useStack, workspaceWithKey } from './support.ts';

type Models = { object: string; data: { id: string; slug: string; provider: string; provider_slug: string; integration_slug: string }[]; total: number; total_count: number };

for (const dialect of E2E_DIALECTS) {
  describe(`GET /models [${dialect}]`, () => {
    const get = useStack(dialect);

    test('the workspace models, filtered and paged, with total_count', async () => {
      const s = get();
      const openai = uniqueSlug('oai');
      const anthropic = uniqueSlug('ant');
      const hidden = uniqueSlug('hidden');
      await s.admin('POST', '/integrations', { name: 'OpenAI', slug: openai, ai_provider_id: 'openai', workspaces: [{ id: 'default' }] });
      await s.admin('POST', '/integrations', { name: 'Anthropic', slug: anthropic, ai_provider_id: 'anthropic', workspaces: [{ id: 'default' }] });
      await s.admin('POST', '/integrations', { name: 'Hidden', slug: hidden, ai_provider_id: 'openai', workspaces: [{ id: 'default', enabled: false }] });
      await s.admin('PUT', `/integrations/${openai}/integration-models`, { models: [{ slug: 'gpt-4o' }, { slug: 'gpt-4o-mini' }, { slug: 'o1-preview', enabled: false }] });
      await s.admin('PUT', `/integrations/${anthropic}/integration-models`, { models: [{ slug: 'claude-3-5-sonnet' }, { slug: 'claude-3-haiku' }] });
      await s.admin('PUT', `/integrations/${hidden}/integration-models`, { models: [{ slug: 'gpt-hidden' }] });
      // A second provider of the OpenAI integration in the workspace: its models are reachable through both slugs.
      const second = uniqueSlug('second');
      expect((await s.admin('POST', '/providers', { name: 'Second', slug: second, integration_id: openai })).status).toBe(201);

      const all = await s.admin<Models>('GET', '/models');
      expect(all.status).toBe(200);
      expect(all.body.data.map((m) => m.id)).toEqual(
        [
          `@${anthropic}/claude-3-5-sonnet`,
          `@${anthropic}/claude-3-haiku`,
          `@${openai}/gpt-4o`,
          `@${openai}/gpt-4o-mini`,
          `@${second}/gpt-4o`,
          `@${second}/gpt-4o-mini`,
        ].sort(),
      );
      expect(all.body.total_count).toBe(6);

      const byProvider = await s.admin<Models>('GET', '/models?provider=anthropic');
      expect([byProvider.body.total_count, byProvider.body.data.every((m) => m.provider === 'anthropic')]).toEqual([2, true]);
      const bySlug = await s.admin<Models>(`GET`, `/models?provider=@${second}`);
      expect(bySlug.body.data.map((m) => m.slug)).toEqual(['gpt-4o', 'gpt-4o-mini']);
      const byIntegration = await s.admin<Models>('GET', `/models?integration=${openai}`);
      expect(byIntegration.body.total_count).toBe(4);
      const search = await s.admin<Models>('GET', '/models?search=MINI');
      expect(search.body.data.map((m) => m.id)).toEqual([`@${openai}/gpt-4o-mini`, `@${second}/gpt-4o-mini`]);
      const paged = await s.admin<Models>('GET', '/models?page_size=4&current_page=1');
      expect([paged.body.data.length, paged.body.total_count]).toEqual([2, 6]);
      expect((await s.admin('GET', '/models?page_size=0')).status).toBe(400);

      // Another workspace reaches none of them.
      const other = await workspaceWithKey(s, ['models.read']);
      const theirs = await s.admin<Models>('GET', '/models', undefined, other.key);
      expect([theirs.status, theirs.body.total_count]).toEqual([200, 0]);
      // A gateway key (completions.write) may list too; a key with neither scope may not.
      const caller = await workspaceWithKey(s, ['completions.write']);
      expect((await s.admin('GET', '/models', undefined, caller.key)).status).toBe(200);
      const none = await workspaceWithKey(s, ['providers.read']);
      expect((await s.admin('GET', '/models', undefined, none.key)).status).toBe(403);
    });

    test('with x-gateway-provider the provider answers', async () => {
      const s = get();
      const res = await s.gw.handle(
        new Request('http://gateway/v1/models', {
          headers: { 'x-gateway-api-key': 'gw-test-admin-key-0123456789abcdef', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': s.mock.url, authorization: 'Bearer sk-x' },
        }),
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { id: string }[]; total_count?: number };
      expect(body.total_count).toBeUndefined();
      expect(body.data.length).toBeGreaterThan(0);
      expect(s.mock.requests.at(-1)?.path).toBe('/v1/models');
    });
  });
}
