/**
 * An administration route: what this deployment has loaded. `GET /v1/inventory` lists the provider ids and guardrail
 * check ids; `GET /v1/inventory/providers/:id` describes one provider (its endpoints and its own config fields,
 * secrets named as such, never a value). Both need the scope `inventory.read` (or `*`), which this plugin adds to
 * the scopes an API key may be given.
 */
import { definePlugin, Errors, type ProtectedAdminRoute, Services } from '@gateway/sdk';

export const SCOPES = ['inventory.read'] as const;

export default definePlugin({
  setup(api) {
    // The host's live maps of what loaded: complete once every plugin is set up, read on each call (a Map walk).
    const providers = api.service(Services.providerAdapters);
    const checks = api.service(Services.guardrailChecks);
    // The scope catalogue belongs to the api-keys plugin, which may be set up after this one, or not be installed.
    api.onReady(() => api.optional(Services.apiKeyScopes)?.add(SCOPES));

    const list: ProtectedAdminRoute = {
      method: 'GET',
      path: '/inventory',
      scope: SCOPES,
      handle: () =>
        Response.json({ object: 'inventory', providers: [...providers.keys()].sort(), guardrail_checks: [...checks.keys()].sort() }),
    };

    const provider: ProtectedAdminRoute = {
      method: 'GET',
      path: '/inventory/providers/:id',
      scope: SCOPES,
      handle(req) {
        const adapter = providers.get(req.params.id ?? '');
        if (!adapter) throw Errors.notFound(`No provider ${JSON.stringify(req.params.id)} is loaded`);
        const fields = adapter.targetFields;
        return Response.json({
          object: 'provider',
          id: adapter.id,
          endpoints: Object.keys(adapter.endpoints).sort(),
          fields: Object.keys(fields?.fields ?? {}).sort(),
          secret_fields: [...(fields?.secret ?? [])].sort(),
        });
      },
    };

    api.route(list);
    api.route(provider);
  },
});
