/**
 * SCIM 2.0 provisioning (RFC 7643/7644; docs/admin/scim.md) at /v1/scim/v2 on the identity tables: Users, Groups,
 * ServiceProviderConfig, Schemas, ResourceTypes, authenticated by the organisation's SCIM token; and
 * POST /v1/scim/workspaces, which maps a group to a workspace and role. Off with SCIM_ENABLED=OFF.
 */
import { AdminServices } from '@gateway/admin-kit';
import { definePlugin, type KeyVerifier, type PublicAdminRequest, type PublicAdminRoute, Services } from '@gateway/sdk';
import { resourceTypes, schemas, serviceProviderConfig } from './discovery.ts';
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from './groups.ts';
import { mapGroupToWorkspace } from './mapping.ts';
import { ScimError, scimJson } from './scim-errors.ts';
import { scimMigrations } from './tables.ts';
import { SCIM_SCOPE, scimCaller } from './token.ts';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser, type ScimContext } from './users.ts';

export { scimGroupMembers, scimGroups, scimMigrations, scimUsers } from './tables.ts';
export { SCIM_SCOPE } from './token.ts';

const BASE = '/scim/v2';

type Handler = (ctx: ScimContext, req: PublicAdminRequest) => Promise<Response> | Response;

/** The /scim/v2 base URL as the client reached it, for `meta.location`. */
function baseUrl(headers: Headers): string {
  const proto = headers.get('x-forwarded-proto')?.split(',')[0]?.trim() || 'http';
  return `${proto}://${headers.get('x-forwarded-host') ?? headers.get('host') ?? 'localhost'}/v1${BASE}`;
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(scimMigrations);
    api.optional(Services.apiKeyScopes)?.add([SCIM_SCOPE]);
    const events = api.optional(AdminServices.events);
    const membershipUserMode = (api.env.SCIM_MEMBERSHIP_USER_MODE ?? '').trim().toUpperCase() === 'ON';
    let verifier: KeyVerifier | undefined;
    api.onReady(() => {
      verifier = api.optional(Services.apiKeyVerifier);
    });

    const scim = (method: PublicAdminRoute['method'], path: string, handler: Handler): void => {
      api.route({
        public: true,
        method,
        path: `${BASE}${path}`,
        feature: 'scim',
        async handle(req) {
          try {
            const caller = await scimCaller(req.headers, verifier);
            req.audit.organisationId = caller.organisationId;
            const ctx: ScimContext = { database, events, organisationId: caller.organisationId, membershipUserMode, base: baseUrl(req.headers) };
            return await handler(ctx, req);
          } catch (error) {
            if (error instanceof ScimError) return error.toResponse();
            throw error;
          }
        },
      });
    };

    scim('GET', '/ServiceProviderConfig', (ctx) => scimJson(serviceProviderConfig(ctx.base)));
    scim('GET', '/ResourceTypes', (ctx) => scimJson(resourceTypes(ctx.base)));
    scim('GET', '/Schemas', (ctx) => scimJson(schemas(ctx.base)));

    scim('GET', '/Users', (ctx, req) => listUsers(ctx, req.query));
    scim('POST', '/Users', async (ctx, req) => {
      const res = await createUser(ctx, req.body);
      req.audit = { ...req.audit, resource: 'user', action: 'create' };
      return res;
    });
    scim('GET', '/Users/:id', (ctx, req) => getUser(ctx, req.params.id as string));
    scim('PUT', '/Users/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'user', resourceId: req.params.id };
      return replaceUser(ctx, req.params.id as string, req.body);
    });
    scim('PATCH', '/Users/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'user', resourceId: req.params.id };
      return patchUser(ctx, req.params.id as string, req.body);
    });
    scim('DELETE', '/Users/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'user', resourceId: req.params.id };
      return deleteUser(ctx, req.params.id as string);
    });

    scim('GET', '/Groups', (ctx, req) => listGroups(ctx, req.query));
    scim('POST', '/Groups', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'scim_group' };
      return createGroup(ctx, req.body);
    });
    scim('GET', '/Groups/:id', (ctx, req) => getGroup(ctx, req.params.id as string, req.query));
    scim('PUT', '/Groups/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'scim_group', resourceId: req.params.id };
      return replaceGroup(ctx, req.params.id as string, req.body);
    });
    scim('PATCH', '/Groups/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'scim_group', resourceId: req.params.id };
      return patchGroup(ctx, req.params.id as string, req.body, req.query);
    });
    scim('DELETE', '/Groups/:id', (ctx, req) => {
      req.audit = { ...req.audit, resource: 'scim_group', resourceId: req.params.id };
      return deleteGroup(ctx, req.params.id as string);
    });

    api.route({
      method: 'POST',
      path: '/scim/workspaces',
      scope: [SCIM_SCOPE, 'workspaces.write'],
      role: 'admin',
      feature: 'scim',
      handle: (req) => mapGroupToWorkspace(database, events, req),
    });
  },
});
