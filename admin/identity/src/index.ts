/**
 * Identity: organisations, workspaces, users, memberships and invitations. At start it migrates its tables and
 * bootstraps an empty database (service `IdentityServices.bootstrap`, from which the api-keys plugin makes the first
 * key); it provides `adminAuthorizer` (the roles of an administration call), `adminEvents` (membership and archive
 * events other admin plugins listen to) and registers the /workspaces and /users routes.
 */
import { AdminEvents, AdminServices } from '@gateway/admin-kit';
import { defineService, definePlugin, type KeyVerifier, Services } from '@gateway/sdk';
import { IdentityAuthorizer } from './authorizer.ts';
import { bootstrapOrganisation, type BootstrapResult } from './bootstrap.ts';
import { identityRoutes } from './routes/index.ts';
import { identityMigrations } from './tables.ts';

export { IdentityAuthorizer } from './authorizer.ts';
export { bootstrapOrganisation, BOOTSTRAP_SLUG, type BootstrapResult } from './bootstrap.ts';
export {
  findUser,
  findWorkspace,
  type FindWorkspaceOptions,
  lookupUser,
  lookupWorkspace,
  requireActive,
  type UserRow,
  visibleWorkspaces,
  type WorkspaceRow,
} from './find.ts';
export { identityRoutes, type IdentityDeps } from './routes/index.ts';
export { hashToken as hashInviteToken, INVITE_TTL } from './routes/invites.ts';
export { SCOPES, type IdentityScope } from './scopes.ts';
export { checkSlug, slugFromName, SLUG_PATTERN } from './slug.ts';
export {
  identityMigrations,
  ORGANISATION_ROLES,
  organisations,
  type OrganisationRole,
  userInvites,
  users,
  WORKSPACE_ROLES,
  workspaceMembers,
  type WorkspaceRole,
  workspaces,
} from './tables.ts';

/** The services of this plugin that only plugins requiring it use. */
export const IdentityServices = {
  /** What the start did to an empty database (the api-keys plugin makes the first key from it). */
  bootstrap: defineService<BootstrapResult>('identityBootstrap'),
} as const;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(identityMigrations);
    api.provide(IdentityServices.bootstrap, await bootstrapOrganisation(database));
    api.provide(Services.adminAuthorizer, new IdentityAuthorizer(database));
    // A listener's failure must not undo a change already stored: it is logged, and the route answers.
    const events = new AdminEvents((name, error) => api.logger.error({ err: error, event: name }, 'admin event listener failed'));
    api.provide(AdminServices.events, events);
    // The api-keys plugin loads after this one: its verifier, used when an invitation is accepted, is taken once ready.
    let verifier: KeyVerifier | undefined;
    api.onReady(() => {
      verifier = api.optional(Services.apiKeyVerifier);
    });
    const verifyKey = async (secret: string) => verifier?.verify(secret);
    for (const route of identityRoutes({ database, events, verifyKey })) api.route(route);
  },
});
