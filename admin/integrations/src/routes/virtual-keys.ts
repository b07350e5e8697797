/**
 * /virtual-keys (legacy; provider slugs are recommended): provider credentials stored for one workspace and named by
 * `x-gateway-virtual-key` or a config's `virtual_key` (its slug, or its id).
 */
import { type BodyValidator, conflictOnUnique, json, list, noContent, prepareLimits, removeLimits, saveLimits, validator, withLimits } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, eq, Errors } from '@gateway/sdk';
import { type TObject, Type } from '@sinclair/typebox';
import { requireReader, requireWriter, workspaceOf } from '../access.ts';
import { type Ctx, notReady } from '../context.ts';
import { SecretMappingSchema } from '../credentials.ts';
import { buildCredentials, checkMappings, checkProvider } from '../input.ts';
import { findInWorkspace, otherSlugs, pageInWorkspace, workspaceSlugs } from '../lookups.ts';
import { openCredentials, presentVirtualKey, type VirtualKeyRow, virtualKeySummary } from '../present.ts';
import { changedSlug, newSlug, type SlugTaken } from '../slugs.ts';
import { virtualKeyCredentialsAt, virtualKeys } from '../tables.ts';

const closed = { additionalProperties: false } as const;
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Note = Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]);
const Key = Type.String({ minLength: 1, maxLength: 16384 });
const Mappings = Type.Array(SecretMappingSchema, { maxItems: 50 });

/** The bodies, compiled once the loaded providers' fields are known (`configurations`). */
const createBody = (configurations: TObject) =>
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String()),
      provider: Type.String({ minLength: 1, maxLength: 100 }),
      key: Type.Optional(Key),
      configurations: Type.Optional(configurations),
      secret_mappings: Type.Optional(Mappings),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      note: Type.Optional(Note),
      usage_limits: Type.Optional(Type.Unknown()),
      rate_limits: Type.Optional(Type.Unknown()),
    },
    closed,
  );
const updateBody = (configurations: TObject) =>
  Type.Object(
    {
      name: Type.Optional(Name),
      slug: Type.Optional(Type.String()),
      key: Type.Optional(Type.Union([Key, Type.Null()])),
      configurations: Type.Optional(configurations),
      secret_mappings: Type.Optional(Mappings),
      note: Type.Optional(Note),
      usage_limits: Type.Optional(Type.Unknown()),
      rate_limits: Type.Optional(Type.Unknown()),
    },
    closed,
  );

const findVirtualKey = (ctx: Ctx, req: AdminRequest) => findInWorkspace(ctx, req, virtualKeys, 'No such virtual key');
const subjectOf = (row: Pick<VirtualKeyRow, 'id' | 'organisation_id' | 'workspace_id' | 'name'>) =>
  ({ kind: 'virtual_key', id: row.id, organisationId: row.organisation_id, workspaceId: row.workspace_id, name: row.name }) as const;
/** Virtual keys shown with their limits fields, for the limits that are on. */
const withKeyLimits = <T extends { id: string }>(ctx: Ctx, shown: readonly T[]) => withLimits(ctx.limits(), shown, (v) => ({ kind: 'virtual_key', id: v.id, workspaceId: null }));
const taken: SlugTaken = (slug) => Errors.conflict(`A virtual key with slug ${slug} already exists in the workspace`, 'slug');

export function virtualKeyRoutes(ctx: Ctx): AdminRoute[] {
  const { database } = ctx;
  let checkCreate: BodyValidator<ReturnType<typeof createBody>> = notReady;
  let checkUpdate: BodyValidator<ReturnType<typeof updateBody>> = notReady;
  ctx.whenReady((fields) => {
    checkCreate = validator(createBody(fields.schema));
    checkUpdate = validator(updateBody(fields.schema));
  });
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
        const credentials = buildCredentials(body.provider, body, undefined, null, mappings, ctx.fields());
        await checkMappings(ctx, org, [workspace.id], mappings);
        const slug = newSlug(body.slug, body.name, 'virtual-key', await workspaceSlugs(database, virtualKeys, workspace.id), ctx.providerIds(), taken);
        const now = Date.now();
        const id = crypto.randomUUID();
        const row: VirtualKeyRow = {
          id,
          organisation_id: org,
          workspace_id: workspace.id,
          name: body.name.trim(),
          slug,
          ai_provider_id: body.provider,
          credentials: ctx.box.sealJson(credentials, virtualKeyCredentialsAt(id)),
          secret_mappings: mappings,
          note: body.note ?? null,
          created_at: now,
          updated_at: now,
          last_reset_at: null,
        };
        const limits = await prepareLimits(ctx.limits(), subjectOf(row), body);
        await conflictOnUnique(() => database.insert(virtualKeys, row), () => taken(slug));
        await saveLimits(limits);
        await ctx.snapshot.changed();
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'create', workspaceId: workspace.id, after: virtualKeySummary(row) };
        const [shown] = await withKeyLimits(ctx, [presentVirtualKey(row, credentials, ctx.fields().declared)]);
        return json(shown, 201);
      },
    },
    {
      method: 'GET',
      path: '/virtual-keys',
      scope: 'virtual_keys.read',
      async handle(req) {
        const { rows, total } = await pageInWorkspace(ctx, req, virtualKeys);
        return list(
          await withKeyLimits(
            ctx,
            rows.map((r) => presentVirtualKey(r, openCredentials(ctx.box, r.credentials, virtualKeyCredentialsAt(r.id)), ctx.fields().declared)),
          ),
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
        const [shown] = await withKeyLimits(ctx, [presentVirtualKey(row, openCredentials(ctx.box, row.credentials, virtualKeyCredentialsAt(row.id)), ctx.fields().declared)]);
        return json(shown);
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
        const current = openCredentials(ctx.box, row.credentials, virtualKeyCredentialsAt(row.id));
        if (!current && (body.configurations === undefined || body.key === undefined))
          throw Errors.badRequest('The stored credentials cannot be decrypted (another GATEWAY_ENCRYPTION_KEY, or copied from another row?): send key and configurations whole', 'configurations');
        const slug = await changedSlug(body.slug, row.slug, ctx.providerIds(), otherSlugs(database, virtualKeys, row), taken);
        const mappings = body.secret_mappings ?? row.secret_mappings;
        const credentials = buildCredentials(row.ai_provider_id, body, current, null, mappings, ctx.fields());
        if (body.secret_mappings !== undefined) await checkMappings(ctx, req.caller.organisationId, [row.workspace_id], mappings);
        const values = {
          name: body.name?.trim() ?? row.name,
          slug,
          credentials: ctx.box.sealJson(credentials, virtualKeyCredentialsAt(row.id)),
          secret_mappings: mappings,
          note: body.note === undefined ? row.note : body.note,
          updated_at: Date.now(),
        };
        const limits = await prepareLimits(ctx.limits(), subjectOf({ ...row, name: values.name }), body);
        await conflictOnUnique(() => database.update(virtualKeys, values, (c) => eq(c.id, row.id)), () => taken(slug));
        await saveLimits(limits);
        await ctx.snapshot.changed();
        const after = { ...row, ...values };
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: virtualKeySummary(row), after: virtualKeySummary(after) };
        const [shown] = await withKeyLimits(ctx, [presentVirtualKey(after, credentials, ctx.fields().declared)]);
        return json(shown);
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
        await removeLimits(ctx.limits(), [{ kind: 'virtual_key', id: row.id, workspaceId: null }]);
        await ctx.snapshot.changed();
        req.audit = { resource: 'virtual_key', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: virtualKeySummary(row) };
        return noContent();
      },
    },
  ];
}
