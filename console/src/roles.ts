/**
 * What the signed-in key may do beyond its scopes: the roles the administration API checks (docs/admin/identity.md,
 * "Roles"), as GET /api-keys/self reports them. Controls a role may not use are not shown; the gateway still decides
 * (a manager of one workspace and member of another sees the controls everywhere, and the gateway's 403 is shown).
 */
import { can, type Self } from './api.ts';

/** Organisation owners and admins (an organisation-service key acts as an admin): admin in every workspace. */
export const orgAdmin = (self: Self) => self.organisation_role === 'owner' || self.organisation_role === 'admin';

/** Admin of the key's workspace. */
export const workspaceAdmin = (self: Self) => orgAdmin(self) || self.workspace_role === 'admin';

/** Manager or admin of the key's workspace: who writes configs, guardrails, prompts, providers and virtual keys. */
export const workspaceWriter = (self: Self) => workspaceAdmin(self) || self.workspace_role === 'manager';

/** The scope and the role together. */
export const may = (self: Self, scope: string, role: (self: Self) => boolean) => can(self, scope) && role(self);
