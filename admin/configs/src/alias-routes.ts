/**
 * /model-aliases: a workspace's model aliases (docs/clients.md). Workspace members read them; workspace managers and
 * admins (and organisation owners and admins) create, change and delete them, as for saved configs, with the same
 * scopes (`configs.*`: an alias is routing, as a config is). Every change reloads the in-memory set here and in every
 * other process before the answer.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { iso, isUniqueViolation, json, list, noContent, page, requireWorkspaceRole, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, eq, Errors, inArray, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { AliasRow, AliasStore } from './alias-store.ts';
import { modelAliases } from './alias-table.ts';
import { savedConfigs } from './tables.ts';

export interface AliasRouteDeps {
  database: Database;
  aliases: AliasStore;
}

/** What a client may send as `model`: no whitespace, not the `@<slug>/<model>` form. */
const ALIAS = /^[^@\s][^\s]{0,127}$/;
/** `@<provider slug>`: a provider stored for the workspace, or an integration it may use. */
const PROVIDER = /^@[A-Za-z0-9][A-Za-z0-9._-]{0,126}$/;

const Alias = Type.String({ minLength: 1, maxLength: 128 });
const Ref = Type.String({ minLength: 1, maxLength: 255 });
const Provider = Type.String({ minLength: 2, maxLength: 128 });
const Model = Type.String({ minLength: 1, maxLength: 255 });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const checkCreate = validator(
  Type.Object(
    {
      alias: Alias,
      config_id: Type.Optional(Ref),
      provider: Type.Optional(Provider),
      model: Type.Optional(Model),
      workspace_id: Type.Optional(Ref),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    { alias: Type.Optional(Alias), config_id: Type.Optional(Nullable(Ref)), provider: Type.Optional(Nullable(Provider)), model: Type.Optional(Nullable(Model)) },
    { additionalProperties: false },
  ),
);

const NOT_FOUND = 'No such model alias';
const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;

export interface AliasView {
  object: 'model_alias';
  id: string;
  alias: string;
  organisation_id: string;
  workspace_id: string;
  config_id: string | null;
  provider: string | null;
  model: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export function presentAlias(row: AliasRow): AliasView {
  return {
    object: 'model_alias',
    id: row.id,
    alias: row.alias,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    config_id: row.config_id,
    provider: row.provider,
    model: row.model,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

interface Target {
  config_id: string | null;
  provider: string | null;
  model: string | null;
}

export function aliasRoutes(deps: AliasRouteDeps): AdminRoute[] {
  const { database, aliases } = deps;

  /** Exactly one of a saved config of the alias's workspace, or a provider with a model. */
  async function checkTarget(t: Target, workspaceId: string, organisationId: string): Promise<Target> {
    if ((t.config_id === null) === (t.provider === null)) throw Errors.badRequest('Give exactly one of config_id, provider', 'config_id');
    if (t.provider !== null) {
      if (!PROVIDER.test(t.provider)) throw Errors.badRequest('provider must be @<provider slug>', 'provider');
      if (t.model === null) throw Errors.badRequest('An alias of a provider names its model', 'model');
      return t;
    }
    const ref = t.config_id as string;
    const [config] = await database.select(savedConfigs, {
      where: (c) => and(eq(c.organisation_id, organisationId), eq(c.workspace_id, workspaceId), eq(c.id, ref)),
      limit: 1,
      fresh: true,
    });
    const found =
      config ??
      (await database.select(savedConfigs, { where: (c) => and(eq(c.workspace_id, workspaceId), eq(c.slug, ref)), limit: 1, fresh: true }))[0];
    if (!found || found.organisation_id !== organisationId) throw Errors.badRequest(`config_id: no saved config ${JSON.stringify(ref.slice(0, 64))} in the alias's workspace`, 'config_id');
    return { ...t, config_id: found.id };
  }

  const checkName = (alias: string): string => {
    if (!ALIAS.test(alias)) throw Errors.badRequest('alias: 1 to 128 characters, no whitespace, not starting with @', 'alias');
    return alias;
  };

  const taken = (alias: string) => Errors.conflict(`The alias ${JSON.stringify(alias)} is already taken in this workspace`, 'alias');

  /** An alias of the caller's organisation by id, or by name (in `workspace_id` of the query, or the caller's workspace). */
  async function lookup(req: AdminRequest): Promise<AliasRow> {
    const org = req.caller.organisationId;
    const ref = req.params.aliasId ?? '';
    const [byId] = await database.select(modelAliases, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (byId) return byId;
    const hint = req.query.get('workspace_id');
    const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
    const [byName] = await database.select(modelAliases, {
      where: (c) => and(eq(c.organisation_id, org), eq(c.workspace_id, workspaceId), eq(c.alias, ref)),
      limit: 1,
      fresh: true,
    });
    if (!byName) throw Errors.notFound(NOT_FOUND);
    return byName;
  }

  const reread = async (id: string): Promise<AliasRow> => {
    const [row] = await database.select(modelAliases, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  const list_: AdminRoute = {
    method: 'GET',
    path: '/model-aliases',
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
      const where: Where<typeof modelAliases.columns> = (c) => {
        const parts: SQL[] = [eq(c.organisation_id, org)];
        if (visible !== 'all') parts.push(visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(modelAliases, where),
        database.select(modelAliases, { where, orderBy: (c) => [asc(c.alias), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentAlias), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/model-aliases',
    scope: 'configs.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await requireWorkspaceRole(req.principal, workspace.id, 'manager', 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      const alias = checkName(body.alias);
      const target = await checkTarget({ config_id: body.config_id ?? null, provider: body.provider ?? null, model: body.model ?? null }, workspaceId, org);
      const id = crypto.randomUUID();
      const now = Date.now();
      try {
        await database.insert(modelAliases, { id, organisation_id: org, workspace_id: workspaceId, alias, ...target, created_at: now, updated_at: now });
      } catch (error) {
        if (isUniqueViolation(error)) throw taken(alias);
        throw error;
      }
      await aliases.changed();
      const view = presentAlias(await reread(id));
      req.audit = { resource: 'model_alias', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/model-aliases/:aliasId',
    scope: 'configs.read',
    async handle(req) {
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'member', NOT_FOUND);
      return json(presentAlias(row));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/model-aliases/:aliasId',
    scope: 'configs.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'manager', NOT_FOUND);
      if (Object.keys(body).length === 0) throw Errors.badRequest('Give at least one of alias, config_id, provider, model', 'body');
      const alias = body.alias === undefined ? row.alias : checkName(body.alias);
      // Naming one kind of target drops the other.
      const target = await checkTarget(
        {
          config_id: body.config_id !== undefined ? body.config_id : body.provider ? null : row.config_id,
          provider: body.provider !== undefined ? body.provider : body.config_id ? null : row.provider,
          model: body.model !== undefined ? body.model : row.model,
        },
        row.workspace_id,
        row.organisation_id,
      );
      try {
        await database.update(modelAliases, { alias, ...target, updated_at: Math.max(Date.now(), row.updated_at + 1) }, (c) => eq(c.id, row.id));
      } catch (error) {
        if (isUniqueViolation(error)) throw taken(alias);
        throw error;
      }
      await aliases.changed();
      const view = presentAlias(await reread(row.id));
      req.audit = { resource: 'model_alias', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentAlias(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/model-aliases/:aliasId',
    scope: 'configs.delete',
    async handle(req) {
      const row = await lookup(req);
      await requireWorkspaceRole(req.principal, row.workspace_id, 'manager', NOT_FOUND);
      await database.delete(modelAliases, (c) => eq(c.id, row.id));
      await aliases.changed();
      req.audit = { resource: 'model_alias', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentAlias(row) };
      return noContent();
    },
  };

  return [list_, create, get, update, remove];
}
