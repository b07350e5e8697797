/**
 * Who may read and change MCP integrations and servers (docs/admin/mcp.md, "Permissions"):
 * - an organisation-level integration: read by any key of the organisation, changed by organisation owners and admins;
 * - a workspace's integration: read by any role in it, changed by its admins, and by its managers while the security
 *   setting `managersWriteWsMcpIntegrations` is on;
 * - a workspace's MCP server: read by any role in it, changed by its admins, and by its managers while
 *   `managersWriteMcpServers` is on.
 * Without the settings plugin the settings' defaults (on) apply.
 */
import { requireOrgAdmin, requireWorkspaceRole, type SecuritySettings, type SecuritySettingsService } from '@gateway/admin-kit';
import { Errors, type Principal } from '@gateway/sdk';

export type ManagerSetting = Extract<keyof SecuritySettings, 'managersWriteWsMcpIntegrations' | 'managersWriteMcpServers'>;

export async function requireReader(principal: Principal, workspaceId: string | null, missing: string): Promise<void> {
  if (workspaceId !== null) await requireWorkspaceRole(principal, workspaceId, 'member', missing);
}

export async function requireWriter(
  principal: Principal,
  workspaceId: string | null,
  setting: ManagerSetting,
  security: SecuritySettingsService | undefined,
  missing: string,
): Promise<void> {
  if (workspaceId === null) return requireOrgAdmin(principal);
  const role = await requireWorkspaceRole(principal, workspaceId, 'manager', missing);
  if (role !== 'manager') return;
  const allowed = security ? (await security.get(principal.caller.organisationId, workspaceId))[setting] : true;
  if (!allowed) throw Errors.forbidden(`Workspace managers may not make this change (security setting ${setting})`);
}
