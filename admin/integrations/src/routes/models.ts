/**
 * GET /models without a provider chosen (the server passes it through to the provider when a request names one):
 * what the workspace reaches, in OpenAI's list shape (`{object: "list", data: [{id, object: "model", created,
 * owned_by}]}`, so that model pickers of OpenAI-compatible clients fill themselves; docs/clients.md): one entry per
 * way to call a model (`@<provider_slug>/<model>`), from the enabled integration models of the integrations it may
 * use, then the workspace's model aliases. Open to every workspace role. Answered from memory. All of it on one page
 * unless `page_size` says otherwise (a client that knows only OpenAI's API does not page).
 */
import { list, MAX_PAGE_SIZE, page } from '@gateway/admin-kit';
import type { AdminRoute, ModelRouting } from '@gateway/sdk';
import { requireReader, workspaceOf } from '../access.ts';
import type { Ctx } from '../context.ts';
import { MODELS_SCOPES } from '../scopes.ts';
import { type IntegrationEntry, key, type StoredSet } from '../stored-set.ts';

export interface ModelView {
  id: string;
  object: 'model';
  /** Seconds since the epoch (OpenAI's `created`): when the model was added to its integration. */
  created: number;
  /** The provider behind it (`openai`, `anthropic`, …). */
  owned_by: string;
  slug: string;
  provider: string;
  provider_slug: string;
  integration_id: string;
  integration_slug: string;
}

/** A model alias of the workspace: `id` is what a client sends as `model`. */
export interface AliasModelView {
  id: string;
  object: 'model';
  created: number;
  owned_by: 'alias';
  alias: true;
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
          created: Math.floor(model.createdAt / 1000),
          owned_by: integration.provider,
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

/** `routing`: the model aliases (service `modelRouting`), when the saved-config plugin is loaded. */
export function modelRoutes(ctx: Ctx, routing: () => ModelRouting | undefined = () => undefined): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/models',
      scope: MODELS_SCOPES,
      async handle(req) {
        const workspace = await workspaceOf(ctx, req, req.query.get('workspace_id'), 'workspace_id');
        await requireReader(req, workspace.id);
        const p = page(req.query, { pageSize: MAX_PAGE_SIZE });
        const provider = req.query.get('provider')?.replace(/^@/, '');
        const integration = req.query.get('integration');
        const search = req.query.get('search')?.toLowerCase();
        const matching: (ModelView | AliasModelView)[] = reachableModels(ctx.snapshot.current, req.caller.organisationId, workspace.id).filter(
          (m) =>
            (!provider || m.provider === provider || m.provider_slug === provider) &&
            (!integration || m.integration_id === integration || m.integration_slug === integration) &&
            (!search || m.slug.toLowerCase().includes(search)),
        );
        // An alias belongs to no provider or integration: listed only when neither filter is given.
        if (!provider && !integration)
          for (const alias of routing()?.aliases(req.caller.organisationId, workspace.id) ?? [])
            if (!search || alias.alias.toLowerCase().includes(search))
              matching.push({ id: alias.alias, object: 'model', created: Math.floor(alias.createdAt / 1000), owned_by: 'alias', alias: true });
        return list(matching.slice(p.offset, p.offset + p.limit), matching.length, { total_count: matching.length });
      },
    },
  ];
}
