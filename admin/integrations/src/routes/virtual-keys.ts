/**
 * /virtual-keys (legacy; provider slugs are recommended): provider credentials stored for one workspace and named by
 * `x-gateway-virtual-key` or a config's `virtual_key` (its slug, or its id).
 */
import { json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, eq, Errors, ne, or, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireReader, requireWriter, workspaceOf } from '../access.ts';
import type { Ctx } from '../context.ts';
import { ConfigurationsSchema, SecretMappingSchema } from '../credentials.ts';
import { buildCredentials, checkMappings, checkProvider } from '../input.ts';
import { openCredentials, presentVirtualKey, type VirtualKeyRow, virtualKeySummary } from '../present.ts';
import { checkSlug, freeSlug, slugFromName } from '../slugs.ts';
import { virtualKeys } from '../tables.ts';
import { isUniqueViolation } from '../unique.ts';

const closed = { additionalProperties: false } as const;
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Note = Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]);
const Key = Type.String({ minLength: 1, maxLength: 16384 });
const Mappings = Type.Array(SecretMappingSchema, { maxItems: 50 });

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String()),
      provider: Type.String({ minLength: 1, maxLength: 100 }),
      key: Type.Optional(Key),
      configurations: Type.Optional(ConfigurationsSchema),
      secret_mappings: Type.Optional(Mappings),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      note: Type.Optional(Note),
    },
    closed,
  ),
);
const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Name),
      slug: Type.Optional(Type.String()),
      key: Type.Optional(Type.Union([Key, Type.Null()])),
      configurations: Type.Optional(ConfigurationsSchema),
      secret_mappings: Type.Optional(Mappings),
      note: Type.Optional(Note),
    },
    closed,
  ),
);

/** A virtual key by id, or by slug in the workspace the query names (the caller's by default); 404 otherwise. */
async function findVirtualKey(ctx: Ctx, req: AdminRequest): Promise<VirtualKeyRow> {
  const ref = req.params.id ?? '';
  const workspaceRef = req.query.get('workspace_id');
  const workspaceId = workspaceRef ? (await workspaceOf(ctx, req, workspaceRef, 'workspace_id')).id : req.caller.workspaceId;
  const rows = await ctx.database.select(virtualKeys, {
    fresh: true,
    where: (c) => and(eq(c.organisation_id, req.caller.organisationId), or(eq(c.id, ref), and(eq(c.slug, ref), eq(c.workspace_id, workspaceId)))),
    limit: 2,
  });
  const row = rows.find((r) => r.id === ref) ?? rows[0];
  if (!row) throw Errors.notFound('No such virtual key');
  return row;
}

export function virtualKeyRoutes(ctx: Ctx): AdminRoute[] {
  const { database } = ctx;
  return [
    {
      method: 'POST',
      path: '/virtual-keys',
      scope: 'virtual_keys.write',
      async handle(req) {
        const body = checkCreate(req.body);
        const org = req.caller.organisationId;
        const workspace = await workspaceOf(ctx, req, body.workspace_id, 'workspace_id');
        await requireWriter(ctx, req, workspace);
        checkProvider(ctx, body.provider, 'provider');
        const mappings = body.secret_mappings ?? [];
        const credentials = buildCredentials(body.provider, body, undefined, null, mappings);
        await checkMappings(ctx, org, [workspace.id], mappings);
        const providerIds = ctx.providerIds();
        const taken = new Set((await database.select(virtualKeys, { fresh: true, where: (c) => eq(c.workspace_id, workspace.id) })).map((k) => k.slug));
        let slug: string;
        if (body.slug !== undefined) {
          slug = checkSlug(body.slug, 'slug', providerIds);
          if (taken.has(slug)) throw Errors.conflict(`A virtual key with slug ${slug} already exists in the workspace`, 'slug');
        } else slug = freeSlug(slugFromName(body.name, 'virtual-key'), taken, providerIds);
        const now = Date.now();
        const row: VirtualKeyRow = {
          id: crypto.randomUUID(),
          organisation_id: org,
          workspace_id: workspace.id,
          name: body.name.trim(),
          slug,
          ai_provider_id: body.provider,
          credentials: ctx.box.sealJson(credentials),
          secret_mappings: mappings,
          note: body.note ?? null,
          created_at: now,
          updated_at: now,
          last_reset_at: null,
        };
        try {
          await database.insert(virtualKeys, row);
        } catch (error) {
          if (isUniqueViolation(error)) throw Errors.conflict(`A virtual key with slug ${slug} already exists in the workspace`, 'slug');
          throw error;
        }
        await ctx.snapshot.changed();
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'create', workspaceId: workspace.id, after: virtualKeySummary(row) };
        return json(presentVirtualKey(row, credentials), 201);
      },
    },
    {
      method: 'GET',
      path: '/virtual-keys',
      scope: 'virtual_keys.read',
      async handle(req) {
        const workspace = await workspaceOf(ctx, req, req.query.get('workspace_id'), 'workspace_id');
        await requireReader(req, workspace.id);
        const p = page(req.query);
        const where: Where<typeof virtualKeys.columns> = (c) => eq(c.workspace_id, workspace.id);
        const [rows, total] = await Promise.all([
          database.select(virtualKeys, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
          database.count(virtualKeys, where),
        ]);
        return list(
          rows.map((r) => presentVirtualKey(r, openCredentials(ctx.box, r.credentials))),
          total,
        );
      },
    },
    {
      method: 'GET',
      path: '/virtual-keys/:id',
      scope: 'virtual_keys.read',
      async handle(req) {
        const row = await findVirtualKey(ctx, req);
        await requireReader(req, row.workspace_id);
        return json(presentVirtualKey(row, openCredentials(ctx.box, row.credentials)));
      },
    },
    {
      method: 'PUT',
      path: '/virtual-keys/:id',
      scope: 'virtual_keys.write',
      async handle(req) {
        const body = checkUpdate(req.body);
        const row = await findVirtualKey(ctx, req);
        await requireWriter(ctx, req, await workspaceOf(ctx, req, row.workspace_id));
        const current = openCredentials(ctx.box, row.credentials);
        if (!current && (body.configurations === undefined || body.key === undefined))
          throw Errors.badRequest('The stored credentials cannot be decrypted (another GATEWAY_ENCRYPTION_KEY?): send key and configurations whole', 'configurations');
        let slug = row.slug;
        if (body.slug !== undefined && body.slug !== row.slug) {
          slug = checkSlug(body.slug, 'slug', ctx.providerIds());
          const clash = await database.count(virtualKeys, (c) => and(eq(c.workspace_id, row.workspace_id), eq(c.slug, slug), ne(c.id, row.id)), { fresh: true });
          if (clash) throw Errors.conflict(`A virtual key with slug ${slug} already exists in the workspace`, 'slug');
        }
        const mappings = body.secret_mappings ?? row.secret_mappings;
        const credentials = buildCredentials(row.ai_provider_id, body, current, null, mappings);
        if (body.secret_mappings !== undefined) await checkMappings(ctx, req.caller.organisationId, [row.workspace_id], mappings);
        const values = {
          name: body.name?.trim() ?? row.name,
          slug,
          credentials: ctx.box.sealJson(credentials),
          secret_mappings: mappings,
          note: body.note === undefined ? row.note : body.note,
          updated_at: Date.now(),
        };
        try {
          await database.update(virtualKeys, values, (c) => eq(c.id, row.id));
        } catch (error) {
          if (isUniqueViolation(error)) throw Errors.conflict(`A virtual key with slug ${slug} already exists in the workspace`, 'slug');
          throw error;
        }
        await ctx.snapshot.changed();
        const after = { ...row, ...values };
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: virtualKeySummary(row), after: virtualKeySummary(after) };
        return json(presentVirtualKey(after, credentials));
      },
    },
    {
      method: 'DELETE',
      path: '/virtual-keys/:id',
      scope: 'virtual_keys.delete',
      async handle(req) {
        const row = await findVirtualKey(ctx, req);
        await requireWriter(ctx, req, await workspaceOf(ctx, req, row.workspace_id));
        await database.delete(virtualKeys, (c) => eq(c.id, row.id));
        await ctx.snapshot.changed();
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: virtualKeySummary(row) };
        return noContent();
      },
    },
  ];
}
