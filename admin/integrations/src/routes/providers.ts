/**
 * /providers: a workspace's providers, each built on an integration the workspace may use; `@<slug>` in a request
 * names one. Readable by every workspace role; written by workspace admins (and managers, per the security setting).
 */
import { json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, eq, Errors, GatewayError, inArray, ne, or, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireReader, requireWriter, workspaceOf } from '../access.ts';
import type { Ctx } from '../context.ts';
import { findIntegration } from '../lookups.ts';
import { type IntegrationRow, presentProvider, type ProviderRow } from '../present.ts';
import { checkSlug, freeSlug, slugFromName } from '../slugs.ts';
import { integrations, integrationWorkspaces, workspaceProviders } from '../tables.ts';
import { isUniqueViolation } from '../unique.ts';

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

/** A provider by id, or by slug in the workspace the query names (the caller's by default); 404 otherwise. */
async function findProvider(ctx: Ctx, req: AdminRequest): Promise<ProviderRow> {
  const ref = req.params.id ?? '';
  const org = req.caller.organisationId;
  const workspaceRef = req.query.get('workspace_id');
  const workspaceId = workspaceRef ? (await workspaceOf(ctx, req, workspaceRef, 'workspace_id')).id : req.caller.workspaceId;
  const rows = await ctx.database.select(workspaceProviders, {
    fresh: true,
    where: (c) => and(eq(c.organisation_id, org), or(eq(c.id, ref), and(eq(c.slug, ref), eq(c.workspace_id, workspaceId)))),
    limit: 2,
  });
  const row = rows.find((r) => r.id === ref) ?? rows[0];
  if (!row) throw Errors.notFound('No such provider');
  return row;
}

async function integrationsById(database: Database, ids: readonly string[]): Promise<Map<string, IntegrationRow>> {
  if (ids.length === 0) return new Map();
  const rows = await database.select(integrations, { where: (c) => inArray(c.id, [...new Set(ids)]) });
  return new Map(rows.map((r) => [r.id, r]));
}

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
        const providerIds = ctx.providerIds();
        const taken = new Set(
          (await database.select(workspaceProviders, { fresh: true, where: (c) => eq(c.workspace_id, workspace.id) })).map((p) => p.slug),
        );
        let slug: string;
        if (body.slug !== undefined) {
          slug = checkSlug(body.slug, 'slug', providerIds);
          if (taken.has(slug)) throw Errors.conflict(`A provider with slug ${slug} already exists in the workspace`, 'slug');
        } else slug = freeSlug(slugFromName(body.name, 'provider'), taken, providerIds);
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
        try {
          await database.insert(workspaceProviders, row);
        } catch (error) {
          if (isUniqueViolation(error)) throw Errors.conflict(`A provider with slug ${slug} already exists in the workspace`, 'slug');
          throw error;
        }
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
        const workspace = await workspaceOf(ctx, req, req.query.get('workspace_id'), 'workspace_id');
        await requireReader(req, workspace.id);
        const p = page(req.query);
        const where: Where<typeof workspaceProviders.columns> = (c) => eq(c.workspace_id, workspace.id);
        const [rows, total] = await Promise.all([
          database.select(workspaceProviders, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
          database.count(workspaceProviders, where),
        ]);
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
        let slug = row.slug;
        if (body.slug !== undefined && body.slug !== row.slug) {
          slug = checkSlug(body.slug, 'slug', ctx.providerIds());
          const clash = await database.count(workspaceProviders, (c) => and(eq(c.workspace_id, row.workspace_id), eq(c.slug, slug), ne(c.id, row.id)), { fresh: true });
          if (clash) throw Errors.conflict(`A provider with slug ${slug} already exists in the workspace`, 'slug');
        }
        const values = { name: body.name?.trim() ?? row.name, slug, note: body.note === undefined ? row.note : body.note, updated_at: Date.now() };
        try {
          await database.update(workspaceProviders, values, (c) => eq(c.id, row.id));
        } catch (error) {
          if (isUniqueViolation(error)) throw Errors.conflict(`A provider with slug ${slug} already exists in the workspace`, 'slug');
          throw error;
        }
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
