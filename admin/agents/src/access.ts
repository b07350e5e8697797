/**
 * Who may read and change agent integrations and servers (docs/admin/agents.md, "Permissions"):
 * - an organisation-level integration: read by any key of the organisation with `organisation_agent_integrations.read`,
 *   changed by organisation owners and admins with `organisation_agent_integrations.write`/`.delete`;
 * - a workspace's integration: read by any role in it with `workspace_agent_integrations.read`, changed by its admins
 *   with `workspace_agent_integrations.write`/`.delete`;
 * - a workspace's agent server, its skills and user access: read by any role in it, changed by its admins and managers.
 * A route takes either integration scope; the handler then asks for the one of the integration's level.
 */
import { requireOrgAdmin, requireWorkspaceRole } from '@gateway/admin-kit';
import { ALL_SCOPES, type AdminRequest, Errors, type Principal } from '@gateway/sdk';

export type IntegrationAction = 'read' | 'write' | 'delete';

export const integrationScopes = (action: IntegrationAction) =>
  [`organisation_agent_integrations.${action}`, `workspace_agent_integrations.${action}`] as const;

function requireScope(req: AdminRequest, scope: string): void {
  const scopes = req.caller.scopes;
  if (!scopes.includes(ALL_SCOPES) && !scopes.includes(scope)) throw Errors.forbidden(`This needs the scope ${scope}`);
}

/**
 * Reading or changing an integration of `workspaceId` (null: organisation-level): the role, and the scope of the
 * integration's level unless `levelScope` is false (its skills' routes have scopes of their own).
 */
export async function requireIntegrationAccess(req: AdminRequest, workspaceId: string | null, action: IntegrationAction, missing: string, levelScope = true): Promise<void> {
  if (workspaceId === null) {
    if (levelScope) requireScope(req, `organisation_agent_integrations.${action}`);
    if (action !== 'read') requireOrgAdmin(req.principal);
    return;
  }
  await requireWorkspaceRole(req.principal, workspaceId, action === 'read' ? 'member' : 'admin', missing);
  if (levelScope) requireScope(req, `workspace_agent_integrations.${action}`);
}

export async function requireServerReader(principal: Principal, workspaceId: string, missing: string): Promise<void> {
  await requireWorkspaceRole(principal, workspaceId, 'member', missing);
}

export async function requireServerWriter(principal: Principal, workspaceId: string, missing: string): Promise<void> {
  await requireWorkspaceRole(principal, workspaceId, 'manager', missing);
}
