import { requireWorkspaceRole } from '@gateway/admin-kit';
import type { AdminRequest, Database } from '@gateway/sdk';
import type { SettingsStore } from '../store.ts';
import { findWorkspace, type WorkspaceRow } from '@gateway/admin-identity';

/** What the settings routes share. */
export interface RouteDeps {
  database: Database;
  store: SettingsStore;
}

/** The workspace of the path (`:workspaceId`, an id or a slug) with the caller an admin of it; 404 / 403 otherwise. */
export async function administeredWorkspace(database: Database, req: AdminRequest): Promise<WorkspaceRow> {
  const workspace = await findWorkspace(database, req.caller.organisationId, req.params.workspaceId ?? '');
  await requireWorkspaceRole(req.principal, workspace.id, 'admin');
  return workspace;
}
