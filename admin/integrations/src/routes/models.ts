/**
 * GET /models without a provider chosen (the server passes it through to the provider when a request names one):
 * the models the workspace reaches, one entry per way to call it (`@<provider_slug>/<model>`), from the enabled
 * integration models of the integrations it may use. Open to every workspace role. Answered from memory.
 */
import { list, page } from '@gateway/admin-kit';
import type { AdminRoute } from '@gateway/sdk';
import { requireReader, workspaceOf } from '../access.ts';
import type { Ctx } from '../context.ts';
import { MODELS_SCOPES } from '../scopes.ts';
import { type IntegrationEntry, key, type StoredSet } from '../stored-set.ts';

export interface ModelView {
  id: string;
  object: 'model';
  slug: string;
  provider: string;
  provider_slug: string;
  integration_id: string;
  integration_slug: string;
}

/** Every model a workspace reaches: through its providers, and through the integration slugs it may use directly. */
export function reachableModels(set: StoredSet, organisationId: string, workspaceId: string): ModelView[] {
  const out: ModelView[] = [];
  const add = (slug: string, integration: IntegrationEntry) => {
    for (const model of integration.models.values())
      if (model.enabled)
        out.push({
          id: `@${slug}/${model.slug}`,
          object: 'model',
          slug: model.slug,
          provider: integration.provider,
          provider_slug: slug,
          integration_id: integration.id,
          integration_slug: integration.slug,
        });
  };
  for (const provider of set.providersByWorkspace.get(workspaceId) ?? [])
    if (provider.integration.workspaces.get(workspaceId) === true) add(provider.slug, provider.integration);
  for (const integration of set.integrations.values()) {
    if (integration.organisationId !== organisationId || integration.workspaces.get(workspaceId) !== true) continue;
    // `@<integration slug>` reaches it unless a provider of the workspace has that slug.
    if (!set.providers.has(key(workspaceId, integration.slug))) add(integration.slug, integration);
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function modelRoutes(ctx: Ctx): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/models',
      scope: MODELS_SCOPES,
      async handle(req) {
        const workspace = await workspaceOf(ctx, req, req.query.get('workspace_id'), 'workspace_id');
        await requireReader(req, workspace.id);
        const p = page(req.query);
        const provider = req.query.get('provider')?.replace(/^@/, '');
        const integration = req.query.get('integration');
        const search = req.query.get('search')?.toLowerCase();
        const matching = reachableModels(ctx.snapshot.current, req.caller.organisationId, workspace.id).filter(
          (m) =>
            (!provider || m.provider === provider || m.provider_slug === provider) &&
            (!integration || m.integration_id === integration || m.integration_slug === integration) &&
            (!search || m.slug.toLowerCase().includes(search)),
        );
        return list(matching.slice(p.offset, p.offset + p.limit), matching.length, { total_count: matching.length });
      },
    },
  ];
}
