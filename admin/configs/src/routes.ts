/**
 * /configs: saved configs with versions. Workspace members read their workspace's configs; workspace managers and
 * admins (and organisation owners and admins) create, change and delete them. A PUT with `config` adds a version
 * and keeps the old ones. Every change reloads the in-memory set here and in every other process before the answer.
 */
import type { SavedGuardrailStore } from '@gateway/admin-guardrails';
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import {
  checkSlug,
  type DocumentFields,
  isUniqueViolation,
  json,
  list,
  noContent,
  openSecrets,
  page,
  requireWorkspaceRole,
  type SealedAt,
  type SecretBox,
  sealSecrets,
  validator,
  writeWithSlug,
} from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type ConfigValidator, type Database, desc, eq, Errors, inArray, type JsonObject, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { modelAliases } from './alias-table.ts';
import { type ConfigRow, presentConfig, presentVersion } from './present.ts';
import type { ConfigStore } from './store.ts';
import { configSecretsAt, savedConfigs, savedConfigVersions, versionSecretsAt } from './tables.ts';
import { checkedConfig, configViolations, NO_PREVIOUS } from './validate.ts';

export const SCOPES = ['configs.read', 'configs.write', 'configs.delete'] as const;

export interface ConfigRouteDeps {
  database: Database;
  store: ConfigStore;
  box: () => SecretBox;
  guardrails: () => SavedGuardrailStore | undefined;
  /** The host's config validation (service `configValidator`): a saved config is checked as a header config is. */
  validator: ConfigValidator;
  /** Which keys of a config are secrets and which decide where they go (the loaded plugins' declarations). */
  fields: () => DocumentFields;
}

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Slug = Type.String({ minLength: 1, maxLength: 64 });
// The config itself is checked by validateConfig, which lists every violation by path.
const AnyConfig = Type.Unknown();

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Slug),
      config: AnyConfig,
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      is_default: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    { name: Type.Optional(Name), slug: Type.Optional(Slug), config: Type.Optional(AnyConfig), is_default: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
);

const checkValidate = validator(Type.Object({ config: AnyConfig }, { additionalProperties: false }));

const NOT_FOUND = 'No such config';
/** A workspace named by `workspace_id` (body or query), read from the writer; 404 naming the field. */
const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;
type Columns = typeof savedConfigs.columns;

export function configRoutes(deps: ConfigRouteDeps): AdminRoute[] {
  const { database, store } = deps;

  /** The config masked, its secrets sealed for the row `at`. */
  const sealed = (config: JsonObject, at: SealedAt) => {
    const { masked, sealed } = sealSecrets(config, deps.box, at, deps.fields());
    return { config: masked, secrets: sealed };
  };

  /** A config of the caller's organisation by id, or by slug (in `workspace_id` of the query, or the caller's workspace). */
  async function lookup(req: AdminRequest): Promise<ConfigRow> {
    const org = req.caller.organisationId;
    const ref = req.params.configId ?? '';
    const [byId] = await database.select(savedConfigs, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (byId) return byId;
    const hint = req.query.get('workspace_id');
    const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
    const [bySlug] = await database.select(savedConfigs, {
      where: (c) => and(eq(c.organisation_id, org), eq(c.workspace_id, workspaceId), eq(c.slug, ref)),
      limit: 1,
      fresh: true,
    });
    if (!bySlug) throw Errors.notFound(NOT_FOUND);
    return bySlug;
  }

  const reread = async (id: string): Promise<ConfigRow> => {
    const [row] = await database.select(savedConfigs, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  const list_: AdminRoute = {
    method: 'GET',
    path: '/configs',
    scope: 'configs.read',
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let visible: string[] | 'all';
      if (filter) {
        const workspaceId = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await requireWorkspaceRole(req.principal, workspaceId, 'member', 'No such workspace: workspace_id');
        visible = [workspaceId];
      } else {
        visible = await visibleWorkspaces(database, req.principal);
      }
      const where: Where<Columns> = (c) => {
        const parts: SQL[] = [eq(c.organisation_id, org)];
        if (visible !== 'all') parts.push(visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(savedConfigs, where),
        database.select(savedConfigs, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map((row) => presentConfig(row)), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/configs',
    scope: 'configs.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await requireWorkspaceRole(req.principal, workspace.id, 'manager', 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      const given = body.slug === undefined ? undefined : checkSlug(body.slug);
      const config = checkedConfig(body.config, NO_PREVIOUS, { organisationId: org, workspaceId }, deps.guardrails(), deps.validator, deps.fields());
      const id = crypto.randomUUID();
      const versionId = crypto.randomUUID();
      const stored = sealed(config, configSecretsAt(id));
      const now = Date.now();
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.transaction(async (tx) => {
            if (body.is_default) await tx.update(savedConfigs, { is_default: false }, (c) => and(eq(c.workspace_id, workspaceId), eq(c.is_default, true)));
            await tx.insert(savedConfigs, {
              id,
              organisation_id: org,
              workspace_id: workspaceId,
              name: body.name,
              slug,
              is_default: body.is_default ?? false,
              version: 1,
              ...stored,
              created_at: now,
              updated_at: now,
            });
            await tx.insert(savedConfigVersions, {
              id: versionId,
              config_id: id,
              organisation_id: org,
              version: 1,
              ...sealed(config, versionSecretsAt(versionId)),
              created_by_key: req.caller.apiKeyId,
              created_by_user: req.caller.userId,
              created_at: now,
            });
          }),
        (taken) => Errors.conflict(`The slug ${JSON.stringify(taken)} is already taken in this workspace`, 'slug'),
      );
      await store.changed();
      const view = presentConfig(await reread(id));
      req.audit = { resource: 'config', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/configs/:configId',
    scope: 'configs.read',
    async handle(req) {
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'member', NOT_FOUND);
      const asked = req.query.get('version');
      if (asked === null || asked === '') return json(presentConfig(row));
      const n = Number(asked);
      if (!Number.isInteger(n) || n < 1) throw Errors.badRequest('version must be a positive integer', 'version');
      const [version] = await database.select(savedConfigVersions, { where: (c) => and(eq(c.config_id, row.id), eq(c.version, n)), limit: 1 });
      if (!version) throw Errors.notFound(`The config has no version ${n}`);
      return json(presentConfig(row, version));
    },
  };

  const versions: AdminRoute = {
    method: 'GET',
    path: '/configs/:configId/versions',
    scope: 'configs.read',
    async handle(req) {
      const p = page(req.query);
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'member', NOT_FOUND);
      const where: Where<typeof savedConfigVersions.columns> = (c) => eq(c.config_id, row.id);
      const [total, rows] = await Promise.all([
        database.count(savedConfigVersions, where),
        database.select(savedConfigVersions, { where, orderBy: (c) => desc(c.version), limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentVersion), total);
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/configs/:configId',
    scope: 'configs.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'manager', NOT_FOUND);
      if (body.name === undefined && body.slug === undefined && body.config === undefined && body.is_default === undefined)
        throw Errors.badRequest('Give at least one of name, slug, config, is_default', 'body');
      const slug = body.slug === undefined ? row.slug : checkSlug(body.slug);
      const config =
        body.config === undefined
          ? undefined
          : checkedConfig(body.config, { masked: row.config, secrets: openSecrets(row.secrets, deps.box, configSecretsAt(row.id)) }, { organisationId: row.organisation_id, workspaceId: row.workspace_id }, deps.guardrails(), deps.validator, deps.fields());
      const version = config ? row.version + 1 : row.version;
      const now = Date.now();
      try {
        await database.transaction(async (tx) => {
          if (body.is_default === true)
            await tx.update(savedConfigs, { is_default: false }, (c) => and(eq(c.workspace_id, row.workspace_id), eq(c.is_default, true)));
          const stored = config ? sealed(config, configSecretsAt(row.id)) : undefined;
          const matched = await tx.update(
            savedConfigs,
            { name: body.name ?? row.name, slug, is_default: body.is_default ?? row.is_default, version, ...stored, updated_at: now },
            // Only over the version read: two writers cannot both make version n+1.
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          );
          if (matched === 0) throw Errors.conflict('The config was changed by another request meanwhile; read it again and retry');
          if (config) {
            const versionId = crypto.randomUUID();
            await tx.insert(savedConfigVersions, {
              id: versionId,
              config_id: row.id,
              organisation_id: row.organisation_id,
              version,
              ...sealed(config, versionSecretsAt(versionId)),
              created_by_key: req.caller.apiKeyId,
              created_by_user: req.caller.userId,
              created_at: now,
            });
          }
        });
      } catch (error) {
        if (isUniqueViolation(error) && slug !== row.slug) throw Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this workspace`, 'slug');
        if (isUniqueViolation(error)) throw Errors.conflict('The config was changed by another request meanwhile; read it again and retry');
        throw error;
      }
      await store.changed();
      const view = presentConfig(await reread(row.id));
      req.audit = { resource: 'config', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentConfig(row), after: view };
      return json(view);
    },
  };

  // A dry run of PUT's config check (the web console's editor validates as one types): the same validation, the
  // stored secrets put back where "********" is sent, nothing written and nothing audited.
  const validate: AdminRoute = {
    method: 'POST',
    path: '/configs/:configId/validate',
    scope: 'configs.write',
    audit: false,
    async handle(req) {
      const body = checkValidate(req.body);
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'manager', NOT_FOUND);
      const previous = { masked: row.config, secrets: openSecrets(row.secrets, deps.box, configSecretsAt(row.id)) };
      const violations = configViolations(body.config, previous, { organisationId: row.organisation_id, workspaceId: row.workspace_id }, deps.guardrails(), deps.validator, deps.fields());
      return json({ object: 'config_validation', valid: violations.length === 0, violations });
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/configs/:configId',
    scope: 'configs.delete',
    async handle(req) {
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'manager', NOT_FOUND);
      // A model alias naming the config would route its calls nowhere.
      const [alias] = await database.select(modelAliases, { where: (c) => eq(c.config_id, row.id), limit: 1, fresh: true });
      if (alias) throw Errors.conflict(`The model alias ${JSON.stringify(alias.alias)} names this config; delete or change it first`);
      await database.transaction(async (tx) => {
        await tx.delete(savedConfigVersions, (c) => eq(c.config_id, row.id));
        await tx.delete(savedConfigs, (c) => eq(c.id, row.id));
      });
      await store.changed();
      req.audit = { resource: 'config', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentConfig(row) };
      return noContent();
    },
  };

  return [list_, create, get, versions, update, validate, remove];
}
