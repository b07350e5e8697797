/** /integrations: an organisation's provider credentials (owners and admins). */
import { type BodyValidator, conflictOnUnique, json, list, noContent, page, saveLimits, validator } from '@gateway/admin-kit';
import { and, type AdminRoute, asc, eq, Errors, inArray, ne, type Where } from '@gateway/sdk';
import { type TObject, Type } from '@sinclair/typebox';
import { type Ctx, notReady } from '../context.ts';
import { type PricingAdjustments, PricingAdjustmentsSchema, SecretMappingSchema } from '../credentials.ts';
import { buildCredentials, checkMappings, checkProvider } from '../input.ts';
import { defaultProviderTargets, findIntegration, resolveAccess } from '../lookups.ts';
import { integrationSummary, openCredentials, presentIntegration } from '../present.ts';
import { changedSlug, checkSlug, newSlug, type SlugTaken } from '../slugs.ts';
import { prepareAccessLimits, WorkspaceAccess, withAccessLimits } from './workspace-access.ts';
import { integrationCredentialsAt, integrationModels, integrations, integrationWorkspaces, workspaceProviders } from '../tables.ts';

const closed = { additionalProperties: false } as const;
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]);
const Key = Type.String({ minLength: 1, maxLength: 16384 });
/** Nullable, yet checked on its own so that a 400 names the exact field (a union would name only its root). */
const Pricing = Type.Unknown();
const checkPricingShape = validator(Type.Object({ pricing_adjustments: PricingAdjustmentsSchema }));
function checkPricing(value: unknown): PricingAdjustments | null {
  return value === null ? null : checkPricingShape({ pricing_adjustments: value }).pricing_adjustments;
}
const AuthModeSchema = Type.Union([Type.Literal('entraFederated'), Type.Null()]);
const Mappings = Type.Array(SecretMappingSchema, { maxItems: 50 });

/** The bodies, compiled once the loaded providers' fields are known (`configurations`). */
const createBody = (configurations: TObject) =>
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String()),
      ai_provider_id: Type.String({ minLength: 1, maxLength: 100 }),
      key: Type.Optional(Key),
      configurations: Type.Optional(configurations),
      description: Type.Optional(Description),
      workspaces: Type.Optional(Type.Array(WorkspaceAccess, { maxItems: 1000 })),
      create_default_provider: Type.Optional(Type.Boolean()),
      default_provider_slug: Type.Optional(Type.String()),
      pricing_adjustments: Type.Optional(Pricing),
      auth_mode: Type.Optional(AuthModeSchema),
      secret_mappings: Type.Optional(Mappings),
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
      description: Type.Optional(Description),
      pricing_adjustments: Type.Optional(Pricing),
      auth_mode: Type.Optional(AuthModeSchema),
      secret_mappings: Type.Optional(Mappings),
    },
    closed,
  );

const taken: SlugTaken = (slug) => Errors.conflict(`An integration with slug ${slug} already exists`, 'slug');

const enabledIds = (access: readonly { workspace_id: string; enabled: boolean }[]) => access.filter((a) => a.enabled).map((a) => a.workspace_id);

export function integrationRoutes(ctx: Ctx): AdminRoute[] {
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
      path: '/integrations',
      scope: 'integrations.write',
      role: 'admin',
      async handle(req) {
        const body = checkCreate(req.body);
        const pricing = body.pricing_adjustments === undefined ? null : checkPricing(body.pricing_adjustments);
        const org = req.caller.organisationId;
        const providerIds = ctx.providerIds();
        checkProvider(ctx, body.ai_provider_id, 'ai_provider_id');
        const slugs = new Set((await database.select(integrations, { fresh: true, where: (c) => eq(c.organisation_id, org) })).map((r) => r.slug));
        const slug = newSlug(body.slug, body.name, 'integration', slugs, providerIds, taken);
        const access = await resolveAccess(database, org, body.workspaces ?? [], 'workspaces');
        const mappings = body.secret_mappings ?? [];
        const authMode = body.auth_mode ?? null;
        const credentials = buildCredentials(body.ai_provider_id, body, undefined, authMode, mappings, ctx.fields());
        const enabled = access.filter((a) => a.enabled).map((a) => a.workspace.id);
        await checkMappings(ctx, org, enabled, mappings);

        const createDefault = body.create_default_provider ?? true;
        if (!createDefault && body.default_provider_slug !== undefined)
          throw Errors.badRequest('default_provider_slug needs create_default_provider true', 'default_provider_slug');
        const defaultSlug = createDefault ? (body.default_provider_slug !== undefined ? checkSlug(body.default_provider_slug, 'default_provider_slug', providerIds) : slug) : null;
        const id = crypto.randomUUID();
        const providerWorkspaces = defaultSlug ? await defaultProviderTargets(database, id, defaultSlug, enabled, 'default_provider_slug') : [];
        const limits = await prepareAccessLimits(ctx, { id, name: body.name.trim(), organisation_id: org }, access, body.workspaces ?? [], 'workspaces');

        const now = Date.now();
        const row = {
          id,
          organisation_id: org,
          name: body.name.trim(),
          slug,
          ai_provider_id: body.ai_provider_id,
          description: body.description ?? null,
          credentials: ctx.box.sealJson(credentials, integrationCredentialsAt(id)),
          auth_mode: authMode,
          secret_mappings: mappings,
          pricing_adjustments: pricing,
          default_provider_slug: defaultSlug,
          created_at: now,
          updated_at: now,
          last_reset_at: null,
        };
        const defaults = providerWorkspaces.map((workspaceId) => ({
          id: crypto.randomUUID(),
          organisation_id: org,
          workspace_id: workspaceId,
          integration_id: id,
          name: row.name,
          slug: defaultSlug as string,
          note: null,
          created_at: now,
          updated_at: now,
        }));
        await conflictOnUnique(
          () =>
            database.transaction(async (tx) => {
              await tx.insert(integrations, row);
              if (access.length)
                await tx.insert(
                  integrationWorkspaces,
                  access.map((a) => ({ organisation_id: org, integration_id: id, workspace_id: a.workspace.id, enabled: a.enabled, created_at: now, updated_at: now })),
                );
              if (defaults.length) await tx.insert(workspaceProviders, defaults);
            }),
          () => Errors.conflict(`An integration with slug ${slug}, or a provider with slug ${defaultSlug}, already exists`, 'slug'),
        );
        await saveLimits(limits);
        await ctx.snapshot.changed();
        const view = {
          ...presentIntegration(row, credentials, ctx.fields().declared),
          workspaces: await withAccessLimits(ctx, id, access.map((a) => ({ id: a.workspace.id, slug: a.workspace.slug, enabled: a.enabled }))),
          default_providers: defaults.map((p) => ({ id: p.id, slug: p.slug, workspace_id: p.workspace_id })),
        };
        req.audit = { resource: 'integration', resourceId: id, action: 'create', workspaceId: null, after: { ...integrationSummary(row), workspaces: view.workspaces, default_providers: view.default_providers } };
        return json(view, 201);
      },
    },
    {
      method: 'GET',
      path: '/integrations',
      scope: 'integrations.read',
      role: 'admin',
      async handle(req) {
        const p = page(req.query);
        const org = req.caller.organisationId;
        const provider = req.query.get('ai_provider_id');
        const where: Where<typeof integrations.columns> = (c) =>
          provider ? and(eq(c.organisation_id, org), eq(c.ai_provider_id, provider)) : eq(c.organisation_id, org);
        const [rows, total] = await Promise.all([
          database.select(integrations, { where, orderBy: (c) => [asc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
          database.count(integrations, where),
        ]);
        return list(
          rows.map((r) => presentIntegration(r, openCredentials(ctx.box, r.credentials, integrationCredentialsAt(r.id)), ctx.fields().declared)),
          total,
        );
      },
    },
    {
      method: 'GET',
      path: '/integrations/:id',
      scope: 'integrations.read',
      role: 'admin',
      async handle(req) {
        const row = await findIntegration(database, req.caller.organisationId, req.params.id ?? '');
        return json(presentIntegration(row, openCredentials(ctx.box, row.credentials, integrationCredentialsAt(row.id)), ctx.fields().declared));
      },
    },
    {
      method: 'PUT',
      path: '/integrations/:id',
      scope: 'integrations.write',
      role: 'admin',
      async handle(req) {
        const body = checkUpdate(req.body);
        const pricing = body.pricing_adjustments === undefined ? undefined : checkPricing(body.pricing_adjustments);
        const org = req.caller.organisationId;
        const row = await findIntegration(database, org, req.params.id ?? '');
        const current = openCredentials(ctx.box, row.credentials, integrationCredentialsAt(row.id));
        if (!current && (body.configurations === undefined || body.key === undefined))
          throw Errors.badRequest('The stored credentials cannot be decrypted (another GATEWAY_ENCRYPTION_KEY, or copied from another row?): send key and configurations whole', 'configurations');
        const others = (slug: string) => database.count(integrations, (c) => and(eq(c.organisation_id, org), eq(c.slug, slug), ne(c.id, row.id)), { fresh: true });
        const slug = await changedSlug(body.slug, row.slug, ctx.providerIds(), others, taken);
        const mappings = body.secret_mappings ?? row.secret_mappings;
        const authMode = body.auth_mode === undefined ? (row.auth_mode as 'entraFederated' | null) : body.auth_mode;
        const credentials = buildCredentials(row.ai_provider_id, body, current, authMode, mappings, ctx.fields());
        if (body.secret_mappings !== undefined) {
          const access = await database.select(integrationWorkspaces, { fresh: true, where: (c) => eq(c.integration_id, row.id) });
          await checkMappings(ctx, org, enabledIds(access), mappings);
        }
        const values = {
          name: body.name?.trim() ?? row.name,
          slug,
          description: body.description === undefined ? row.description : body.description,
          credentials: ctx.box.sealJson(credentials, integrationCredentialsAt(row.id)),
          auth_mode: authMode,
          secret_mappings: mappings,
          pricing_adjustments: pricing === undefined ? row.pricing_adjustments : pricing,
          updated_at: Date.now(),
        };
        await conflictOnUnique(() => database.update(integrations, values, (c) => eq(c.id, row.id)), () => taken(slug));
        await ctx.snapshot.changed();
        const after = { ...row, ...values };
        req.audit = { resource: 'integration', resourceId: row.id, action: 'update', workspaceId: null, before: integrationSummary(row), after: integrationSummary(after) };
        return json(presentIntegration(after, credentials, ctx.fields().declared));
      },
    },
    {
      method: 'DELETE',
      path: '/integrations/:id',
      scope: 'integrations.delete',
      role: 'admin',
      async handle(req) {
        const row = await findIntegration(database, req.caller.organisationId, req.params.id ?? '');
        const providers = await database.select(workspaceProviders, { fresh: true, where: (c) => eq(c.integration_id, row.id) });
        await database.transaction(async (tx) => {
          if (providers.length) await tx.delete(workspaceProviders, (c) => inArray(c.id, providers.map((p) => p.id)));
          await tx.delete(integrationWorkspaces, (c) => eq(c.integration_id, row.id));
          await tx.delete(integrationModels, (c) => eq(c.integration_id, row.id));
          await tx.delete(integrations, (c) => eq(c.id, row.id));
        });
        await ctx.snapshot.changed();
        req.audit = {
          resource: 'integration',
          resourceId: row.id,
          action: 'delete',
          workspaceId: null,
          before: { ...integrationSummary(row), providers: providers.map((p) => ({ id: p.id, slug: p.slug, workspace_id: p.workspace_id })) },
        };
        return noContent();
      },
    },
  ];
}
