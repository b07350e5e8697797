/** Who may act on a workspace's providers and virtual keys. */
import { requireWorkspaceRole } from '@gateway/admin-kit';
import { findWorkspace, type WorkspaceRow } from '@gateway/admin-identity';
import { type AdminRequest, Errors, GatewayError } from '@gateway/sdk';
import type { Ctx } from './context.ts';

/**
 * The workspace a request names (id or slug), the caller's own when it names none. Not the organisation's: a 400
 * naming `param` (a body or query field), else 404.
 */
export async function workspaceOf(ctx: Ctx, req: AdminRequest, idOrSlug: string | undefined | null, param?: string): Promise<WorkspaceRow> {
  try {
    return await findWorkspace(ctx.database, req.caller.organisationId, idOrSlug ?? req.caller.workspaceId);
  } catch (error) {
    if (param && idOrSlug != null && error instanceof GatewayError && error.status === 404)
      throw Errors.badRequest(`${param}: no workspace ${JSON.stringify(idOrSlug)} in the organisation`, param);
    throw error;
  }
}

/** Any role in the workspace. */
export async function requireReader(req: AdminRequest, workspaceId: string): Promise<void> {
  await requireWorkspaceRole(req.principal, workspaceId, 'member');
}

/**
 * Writes to a workspace's providers and virtual keys: workspace admins, and managers while the security setting
 * `managersWriteWsIntegrations` is on (SPEC.md default on; without the settings service the default applies).
 */
export async function requireWriter(ctx: Ctx, req: AdminRequest, workspace: WorkspaceRow): Promise<void> {
  const role = await requireWorkspaceRole(req.principal, workspace.id, 'manager');
  if (role === 'manager') {
    const settings = ctx.security();
    const allowed = settings ? (await settings.get(req.caller.organisationId, workspace.id)).managersWriteWsIntegrations : true;
    if (!allowed) throw Errors.forbidden('Workspace managers may not change workspace integrations here (security setting managersWriteWsIntegrations)');
  }
  if (workspace.status === 'archived') throw Errors.badRequest('The workspace is archived', 'workspace_id');
}
