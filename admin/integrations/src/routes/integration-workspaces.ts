/**
 * /integrations/:id/workspaces: which workspaces may use an integration. Enabling a workspace gives it the
 * integration's default provider (when the integration has one); disabling keeps its providers, whose requests are
 * then refused with 403.
 */
import { workspaces } from '@gateway/admin-identity';
import { json, list, saveLimits, validator } from '@gateway/admin-kit';
import { type AdminRoute, and, asc, type Database, eq, inArray } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../context.ts';
import { checkMappings } from '../input.ts';
import { defaultProviderTargets, findIntegration, resolveAccess } from '../lookups.ts';
import { integrationWorkspaces, workspaceProviders } from '../tables.ts';
import { prepareAccessLimits, WorkspaceAccess, withAccessLimits } from './workspace-access.ts';

const checkPut = validator(Type.Object({ workspaces: Type.Array(WorkspaceAccess, { maxItems: 1000 }) }, { additionalProperties: false }));

/** The access list with each workspace's limits for the integration, for the limits that are on. */
async function accessView(ctx: Ctx, integrationId: string) {
  return withAccessLimits(ctx, integrationId, await accessList(ctx.database, integrationId));
}

async function accessList(database: Database, integrationId: string) {
  const rows = await database.select(integrationWorkspaces, { fresh: true, where: (c) => eq(c.integration_id, integrationId), orderBy: (c) => [asc(c.created_at), asc(c.id)] });
  const ids = rows.map((r) => r.workspace_id);
  const names = ids.length ? await database.select(workspaces, { fresh: true, where: (c) => inArray(c.id, ids) }) : [];
  const byId = new Map(names.map((w) => [w.id, w]));
  return rows.map((r) => ({ id: r.workspace_id, slug: byId.get(r.workspace_id)?.slug ?? null, name: byId.get(r.workspace_id)?.name ?? null, enabled: r.enabled }));
}

export function integrationWorkspaceRoutes(ctx: Ctx): AdminRoute[] {
  const { database } = ctx;
  return [
    {
      method: 'GET',
      path: '/integrations/:id/workspaces',
      scope: 'integrations.read',
      role: 'admin',
      async handle(req) {
        const row = await findIntegration(database, req.caller.organisationId, req.params.id ?? '');
        const data = await accessView(ctx, row.id);
        return list(data, data.length);
      },
    },
    {
      method: 'PUT',
      path: '/integrations/:id/workspaces',
      scope: 'integrations.write',
      role: 'admin',
      async handle(req) {
        const body = checkPut(req.body);
        const org = req.caller.organisationId;
        const row = await findIntegration(database, org, req.params.id ?? '');
        const wanted = await resolveAccess(database, org, body.workspaces, 'workspaces');
        const before = await accessList(database, row.id);
        const state = new Map(before.map((a) => [a.id, a.enabled]));
        for (const a of wanted) state.set(a.workspace.id, a.enabled);
        const enabled = [...state].filter(([, on]) => on).map(([id]) => id);
        await checkMappings(ctx, org, enabled, row.secret_mappings);
        const limits = await prepareAccessLimits(ctx, row, wanted, body.workspaces, 'workspaces');
        const newlyEnabled = wanted.filter((a) => a.enabled).map((a) => a.workspace.id);
        const providerWorkspaces = row.default_provider_slug
          ? await defaultProviderTargets(database, row.id, row.default_provider_slug, newlyEnabled, 'workspaces')
          : [];

        const now = Date.now();
        const known = new Set(before.map((a) => a.id));
        await database.transaction(async (tx) => {
          for (const a of wanted) {
            if (known.has(a.workspace.id))
              await tx.update(integrationWorkspaces, { enabled: a.enabled, updated_at: now }, (c) => and(eq(c.integration_id, row.id), eq(c.workspace_id, a.workspace.id)));
            else
              await tx.insert(integrationWorkspaces, { organisation_id: org, integration_id: row.id, workspace_id: a.workspace.id, enabled: a.enabled, created_at: now, updated_at: now });
          }
          if (providerWorkspaces.length)
            await tx.insert(
              workspaceProviders,
              providerWorkspaces.map((workspaceId) => ({
                organisation_id: org,
                workspace_id: workspaceId,
                integration_id: row.id,
                name: row.name,
                slug: row.default_provider_slug as string,
                note: null,
                created_at: now,
                updated_at: now,
              })),
            );
        });
        await saveLimits(limits);
        await ctx.snapshot.changed();
        const after = await accessView(ctx, row.id);
        req.audit = { resource: 'integration_workspaces', resourceId: row.id, action: 'update', workspaceId: null, before, after };
        return json({ object: 'list', data: after, total: after.length });
      },
    },
  ];
}
