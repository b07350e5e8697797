/**
 * /providers: a workspace's providers, each built on an integration the workspace may use; `@<slug>` in a request
 * names one. Readable by every workspace role; written by workspace admins (and managers, per the security setting).
 */
import { conflictOnUnique, json, list, noContent, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, type Database, eq, Errors, GatewayError, inArray } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireReader, requireWriter, workspaceOf } from '../access.ts';
import type { Ctx } from '../context.ts';
import { findInWorkspace, findIntegration, otherSlugs, pageInWorkspace, workspaceSlugs } from '../lookups.ts';
import { type IntegrationRow, presentProvider, type ProviderRow } from '../present.ts';
import { changedSlug, newSlug, type SlugTaken } from '../slugs.ts';
import { integrations, integrationWorkspaces, workspaceProviders } from '../tables.ts';

const closed = { additionalProperties: false } as const;
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Note = Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]);

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String()),
      integration_id: Type.String({ minLength: 1, maxLength: 255 }),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      note: Type.Optional(Note),
    },
    closed,
  ),
);
const checkUpdate = validator(Type.Object({ name: Type.Optional(Name), slug: Type.Optional(Type.String()), note: Type.Optional(Note) }, closed));

async function integrationsById(database: Database, ids: readonly string[]): Promise<Map<string, IntegrationRow>> {
  if (ids.length === 0) return new Map();
  const rows = await database.select(integrations, { where: (c) => inArray(c.id, [...new Set(ids)]) });
  return new Map(rows.map((r) => [r.id, r]));
}

const findProvider = (ctx: Ctx, req: AdminRequest) => findInWorkspace(ctx, req, workspaceProviders, 'No such provider');
const taken: SlugTaken = (slug) => Errors.conflict(`A provider with slug ${slug} already exists in the workspace`, 'slug');

function summary(row: ProviderRow) {
  return { id: row.id, name: row.name, slug: row.slug, integration_id: row.integration_id, workspace_id: row.workspace_id, note: row.note };
}

export function providerRoutes(ctx: Ctx): AdminRoute[] {
  const { database } = ctx;
  return [
    {
      method: 'POST',
      path: '/providers',
      scope: 'providers.write',
      async handle(req) {
        const body = checkCreate(req.body);
        const org = req.caller.organisationId;
        const workspace = await workspaceOf(ctx, req, body.workspace_id, 'workspace_id');
        await requireWriter(ctx, req, workspace);
        let integration: IntegrationRow;
        try {
          integration = await findIntegration(database, org, body.integration_id);
        } catch (error) {
          if (error instanceof GatewayError && error.status === 404) throw Errors.badRequest(`integration_id: no integration ${JSON.stringify(body.integration_id)} in the organisation`, 'integration_id');
          throw error;
        }
        const access = await database.count(
          integrationWorkspaces,
          (c) => and(eq(c.integration_id, integration.id), eq(c.workspace_id, workspace.id), eq(c.enabled, true)),
          { fresh: true },
        );
        if (!access) throw Errors.forbidden(`The workspace ${workspace.slug} has no access to the integration ${integration.slug}`);
        const slug = newSlug(body.slug, body.name, 'provider', await workspaceSlugs(database, workspaceProviders, workspace.id), ctx.providerIds(), taken);
        const now = Date.now();
        const row: ProviderRow = {
          id: crypto.randomUUID(),
          organisation_id: org,
          workspace_id: workspace.id,
          integration_id: integration.id,
          name: body.name.trim(),
          slug,
          note: body.note ?? null,
          created_at: now,
          updated_at: now,
        };
        await conflictOnUnique(() => database.insert(workspaceProviders, row), () => taken(slug));
        await ctx.snapshot.changed();
        req.audit = { resource: 'provider', resourceId: row.id, action: 'create', workspaceId: workspace.id, after: summary(row) };
        return json(presentProvider(row, integration), 201);
      },
    },
    {
      method: 'GET',
      path: '/providers',
      scope: 'providers.read',
      async handle(req) {
        const { rows, total } = await pageInWorkspace(ctx, req, workspaceProviders);
        const byId = await integrationsById(database, rows.map((r) => r.integration_id));
        return list(rows.map((r) => presentProvider(r, byId.get(r.integration_id))), total);
      },
    },
    {
      method: 'GET',
      path: '/providers/:id',
      scope: 'providers.read',
      async handle(req) {
        const row = await findProvider(ctx, req);
        await requireReader(req, row.workspace_id);
        const byId = await integrationsById(database, [row.integration_id]);
        return json(presentProvider(row, byId.get(row.integration_id)));
      },
    },
    {
      method: 'PUT',
      path: '/providers/:id',
      scope: 'providers.write',
      async handle(req) {
        const body = checkUpdate(req.body);
        const row = await findProvider(ctx, req);
        await requireWriter(ctx, req, await workspaceOf(ctx, req, row.workspace_id));
        const slug = await changedSlug(body.slug, row.slug, ctx.providerIds(), otherSlugs(database, workspaceProviders, row), taken);
        const values = { name: body.name?.trim() ?? row.name, slug, note: body.note === undefined ? row.note : body.note, updated_at: Date.now() };
        await conflictOnUnique(() => database.update(workspaceProviders, values, (c) => eq(c.id, row.id)), () => taken(slug));
        await ctx.snapshot.changed();
        const after = { ...row, ...values };
        req.audit = { resource: 'provider', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: summary(row), after: summary(after) };
        const byId = await integrationsById(database, [row.integration_id]);
        return json(presentProvider(after, byId.get(row.integration_id)));
      },
    },
    {
      method: 'DELETE',
      path: '/providers/:id',
      scope: 'providers.delete',
      async handle(req) {
        const row = await findProvider(ctx, req);
        await requireWriter(ctx, req, await workspaceOf(ctx, req, row.workspace_id));
        await database.delete(workspaceProviders, (c) => eq(c.id, row.id));
        await ctx.snapshot.changed();
        req.audit = { resource: 'provider', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: summary(row) };
        return noContent();
      },
    },
  ];
}
