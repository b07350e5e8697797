/**
 * /integrations/:id/integration-models: the models of an integration, enabled or not, each with an optional custom
 * host (a request for that model through the integration goes there). PUT upserts the models it names.
 *
 * A model's custom host sends the integration's credentials to another host, so a new or changed one needs them
 * entered again: `key`, the integration's key, in the same body. An integration whose other configurations hold
 * secrets (AWS keys, a service account, a client secret) takes no per-model host: set `custom_host` on it instead.
 */
import { timingSafeEqual } from 'node:crypto';
import { type DeclaredFields, list, page, validator } from '@gateway/admin-kit';
import { type AdminRoute, and, asc, eq, Errors, ModelPricesSchema, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../context.ts';
import { checkUrl, type Credentials, secretFields } from '../credentials.ts';
import { findIntegration } from '../lookups.ts';
import { openCredentials, presentModel } from '../present.ts';
import { integrationCredentialsAt, integrationModels } from '../tables.ts';

const ModelConfigurations = Type.Object(
  { custom_host: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })) },
  { additionalProperties: false, minProperties: 1 },
);

const checkPut = validator(
  Type.Object(
    {
      models: Type.Array(
        Type.Object(
          {
            slug: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s@][^\\s]*$' }),
            enabled: Type.Optional(Type.Boolean()),
            configurations: Type.Optional(ModelConfigurations),
            /** The model's own prices (USD per 1M tokens by kind); null: back to the provider's catalogue. */
            pricing: Type.Optional(Type.Union([ModelPricesSchema, Type.Null()])),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 1000 },
      ),
      /** The integration's key, entered again: needed when a model's custom host is set or changed. */
      key: Type.Optional(Type.String({ minLength: 1, maxLength: 16384 })),
    },
    { additionalProperties: false },
  ),
);

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A new or changed model host would take the stored credentials elsewhere: only with them entered again (400 otherwise). */
function checkRedirect(credentials: Credentials | undefined, key: string | undefined, param: string, fields: DeclaredFields): void {
  const secrets = credentials ? secretFields(credentials, fields) : [];
  const others = secrets.filter((f) => f !== 'key');
  if (others.length > 0)
    throw Errors.badRequest(`${param}: a model's custom host would send the integration's ${others.join(', ')} to another host; set configurations.custom_host on the integration instead`, param);
  if (credentials?.key === undefined) return;
  if (key === undefined) throw Errors.badRequest(`${param}: a model's custom host sends the integration's key to another host: enter the key again (key)`, 'key');
  if (!sameText(key, credentials.key)) throw Errors.badRequest("key is not the integration's stored key", 'key');
}

export function integrationModelRoutes(ctx: Ctx): AdminRoute[] {
  const { database } = ctx;
  return [
    {
      method: 'GET',
      path: '/integrations/:id/integration-models',
      scope: 'integrations.read',
      role: 'admin',
      async handle(req) {
        const row = await findIntegration(database, req.caller.organisationId, req.params.id ?? '');
        const p = page(req.query);
        const where: Where<typeof integrationModels.columns> = (c) => eq(c.integration_id, row.id);
        const [rows, total] = await Promise.all([
          database.select(integrationModels, { where, orderBy: (c) => [asc(c.slug)], limit: p.limit, offset: p.offset }),
          database.count(integrationModels, where),
        ]);
        return list(rows.map(presentModel), total);
      },
    },
    {
      method: 'PUT',
      path: '/integrations/:id/integration-models',
      scope: 'integrations.write',
      role: 'admin',
      async handle(req) {
        const body = checkPut(req.body);
        const org = req.caller.organisationId;
        const row = await findIntegration(database, org, req.params.id ?? '');
        const seen = new Set<string>();
        body.models.forEach((m, i) => {
          if (seen.has(m.slug)) throw Errors.badRequest(`models[${i}].slug ${m.slug} appears twice`, `models[${i}].slug`);
          seen.add(m.slug);
          if (m.configurations?.custom_host !== undefined) checkUrl(m.configurations.custom_host, `models[${i}].configurations.custom_host`);
        });
        const existing = new Map(
          (await database.select(integrationModels, { fresh: true, where: (c) => eq(c.integration_id, row.id) })).map((m) => [m.slug, m]),
        );
        const credentials = openCredentials(ctx.box, row.credentials, integrationCredentialsAt(row.id));
        body.models.forEach((m, i) => {
          const host = m.configurations?.custom_host;
          if (host !== undefined && host !== existing.get(m.slug)?.configurations?.custom_host)
            checkRedirect(credentials, body.key, `models[${i}].configurations.custom_host`, ctx.fields().declared);
        });
        const now = Date.now();
        await database.transaction(async (tx) => {
          for (const m of body.models) {
            const before = existing.get(m.slug);
            const configurations = m.configurations === undefined ? (before?.configurations ?? null) : m.configurations;
            const enabled = m.enabled ?? before?.enabled ?? true;
            const pricing = m.pricing === undefined ? (before?.pricing ?? null) : m.pricing;
            if (before)
              await tx.update(integrationModels, { enabled, configurations, pricing, updated_at: now }, (c) => and(eq(c.integration_id, row.id), eq(c.slug, m.slug)));
            else
              await tx.insert(integrationModels, { organisation_id: org, integration_id: row.id, slug: m.slug, enabled, configurations, pricing, created_at: now, updated_at: now });
          }
        });
        await ctx.snapshot.changed();
        const after = await database.select(integrationModels, { fresh: true, where: (c) => eq(c.integration_id, row.id), orderBy: (c) => [asc(c.slug)] });
        req.audit = {
          resource: 'integration_models',
          resourceId: row.id,
          action: 'update',
          workspaceId: null,
          before: body.models.map((m) => {
            const b = existing.get(m.slug);
            return b ? { slug: b.slug, enabled: b.enabled, configurations: b.configurations, pricing: b.pricing } : { slug: m.slug, absent: true };
          }),
          after: body.models.map((m) => ({ slug: m.slug, enabled: m.enabled, configurations: m.configurations, pricing: m.pricing })),
        };
        return list(after.map(presentModel), after.length);
      },
    },
  ];
}
