/** Finding this plugin's rows within one organisation, and the workspace references of a body. */
import { findWorkspace, type WorkspaceRow } from '@gateway/admin-identity';
import { and, type Database, eq, Errors, GatewayError, inArray, or, type TransactionHelpers } from '@gateway/sdk';
import type { IntegrationRow } from './present.ts';
import { integrations, workspaceProviders } from './tables.ts';

type Reader = Pick<TransactionHelpers, 'select'>;

/** The organisation's integration by id or slug; 404 otherwise. */
export async function findIntegration(database: Reader, organisationId: string, idOrSlug: string): Promise<IntegrationRow> {
  const rows = idOrSlug
    ? await database.select(integrations, {
        fresh: true,
        where: (c) => and(eq(c.organisation_id, organisationId), or(eq(c.id, idOrSlug), eq(c.slug, idOrSlug))),
        limit: 2,
      })
    : [];
  const row = rows.find((r) => r.id === idOrSlug) ?? rows[0];
  if (!row) throw Errors.notFound('No such integration');
  return row;
}

export interface AccessInput {
  workspace: WorkspaceRow;
  enabled: boolean;
}

/** `[{id, enabled}]` with ids or slugs of the organisation's workspaces; 400 naming the entry otherwise. */
export async function resolveAccess(database: Database, organisationId: string, refs: readonly { id: string; enabled?: boolean }[], base: string): Promise<AccessInput[]> {
  const out: AccessInput[] = [];
  const seen = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const param = `${base}[${i}].id`;
    let workspace: WorkspaceRow;
    try {
      workspace = await findWorkspace(database, organisationId, ref.id);
    } catch (error) {
      if (error instanceof GatewayError && error.status === 404) throw Errors.badRequest(`${param}: no workspace ${JSON.stringify(ref.id)} in the organisation`, param);
      throw error;
    }
    if (seen.has(workspace.id)) throw Errors.badRequest(`${param}: the workspace appears twice in the list`, param);
    seen.add(workspace.id);
    out.push({ workspace, enabled: ref.enabled ?? true });
  }
  return out;
}

/**
 * Workspaces among `workspaceIds` that still need the default provider `slug` of `integrationId`; 409 when one of
 * them has another provider of that slug.
 */
export async function defaultProviderTargets(database: Reader, integrationId: string, slug: string, workspaceIds: readonly string[], param: string): Promise<string[]> {
  if (workspaceIds.length === 0) return [];
  const existing = await database.select(workspaceProviders, {
    fresh: true,
    where: (c) => and(inArray(c.workspace_id, [...workspaceIds]), eq(c.slug, slug)),
  });
  const clash = existing.find((p) => p.integration_id !== integrationId);
  if (clash) throw Errors.conflict(`A provider with slug ${slug} already exists in workspace ${clash.workspace_id}`, param);
  const have = new Set(existing.map((p) => p.workspace_id));
  return workspaceIds.filter((id) => !have.has(id));
}
