/**
 * /prompts: prompt templates with versions. Each PUT that carries a version field adds a version (with `patch:
 * true` over the latest one); `makeDefault` publishes one. Who may read and write: access.ts. Every change reloads
 * the in-memory set here and in every other process before the answer.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkSlug, isUniqueViolation, json, list, noContent, page, writeWithSlug } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, desc, eq, Errors, inArray, type SQL, sql, type Where } from '@gateway/sdk';
import type { PromptAccessRules } from '../access.ts';
import { checkCreate, checkMakeDefault, checkUpdate, definitionOf, givesVersion } from '../body.ts';
import type { PromptDefinition } from '../definition.ts';
import { type PromptRow, type PromptVersionRow, presentPrompt, presentPromptSummary, presentPromptVersion } from '../present.ts';
import { parseReference, type PromptStore, versionNumber } from '../store.ts';
import { prompts, promptVersions } from '../tables.ts';

export const SCOPES = ['prompts.read', 'prompts.write', 'prompts.delete'] as const;

export interface PromptRouteDeps {
  database: Database;
  store: PromptStore;
  access: PromptAccessRules;
}

const NOT_FOUND = 'No such prompt';
const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;
/** `/prompts/partials` is the partials' route: no prompt may take that slug. */
const RESERVED_SLUGS = new Set(['partials']);
type Columns = typeof prompts.columns;

/** A LIKE pattern that matches `text` anywhere, its wildcards taken literally (escape character `!`). */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

function promptSlug(slug: string): string {
  checkSlug(slug);
  if (RESERVED_SLUGS.has(slug)) throw Errors.badRequest(`slug ${JSON.stringify(slug)} is reserved`, 'slug');
  return slug;
}

export function promptRoutes(deps: PromptRouteDeps): AdminRoute[] {
  const { database, store, access } = deps;

  /** The prompt `:promptId` names (id, or slug in `workspace_id` of the query or the caller's workspace) and the version its suffix picks. */
  async function lookup(req: AdminRequest): Promise<{ row: PromptRow; version: number }> {
    const org = req.caller.organisationId;
    const { ref, choice } = parseReference(req.params.promptId ?? '');
    const [byId] = await database.select(prompts, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    let row = byId;
    if (!row) {
      const hint = req.query.get('workspace_id');
      const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
      [row] = await database.select(prompts, { where: (c) => and(eq(c.organisation_id, org), eq(c.workspace_id, workspaceId), eq(c.slug, ref)), limit: 1, fresh: true });
    }
    if (!row) throw Errors.notFound(NOT_FOUND);
    return { row, version: versionNumber({ version: row.version, publishedVersion: row.published_version }, choice) };
  }

  async function versionRow(promptId: string, n: number): Promise<PromptVersionRow> {
    const [row] = await database.select(promptVersions, { where: (c) => and(eq(c.prompt_id, promptId), eq(c.version, n)), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(`The prompt has no version ${n}`);
    return row;
  }

  const reread = async (id: string) => {
    const [row] = await database.select(prompts, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  const newVersion = (req: AdminRequest, promptId: string, org: string, version: number, definition: PromptDefinition, description: string | undefined, now: number) => ({
    id: crypto.randomUUID(),
    prompt_id: promptId,
    organisation_id: org,
    version,
    definition: definition as PromptDefinition & Record<string, never>,
    description: description ?? null,
    created_by_key: req.caller.apiKeyId,
    created_by_user: req.caller.userId,
    created_at: now,
  });

  const list_: AdminRoute = {
    method: 'GET',
    path: '/prompts',
    scope: 'prompts.read',
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let candidates: string[] | 'all';
      if (filter) {
        const workspaceId = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await access.require(req, workspaceId, 'view', 'No such workspace: workspace_id');
        candidates = [workspaceId];
      } else {
        candidates = await visibleWorkspaces(database, req.principal);
        // Workspaces where the caller's role may not view prompts (security settings) are left out.
        if (candidates !== 'all') {
          const allowed = await Promise.all(candidates.map((ws) => access.require(req, ws, 'view', NOT_FOUND).then(() => true, () => false)));
          candidates = candidates.filter((_, i) => allowed[i]);
        }
      }
      const visible = candidates;
      const name = req.query.get('name');
      const collection = req.query.get('collection_id');
      const where: Where<Columns> = (c) => {
        const parts: SQL[] = [eq(c.organisation_id, org)];
        if (visible !== 'all') parts.push(visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
        if (name) parts.push(sql`lower(${c.name}) like ${containsPattern(name)} escape '!'`);
        if (collection) parts.push(eq(c.collection_id, collection));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(prompts, where),
        database.select(prompts, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentPromptSummary), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/prompts',
    scope: 'prompts.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await access.require(req, workspace.id, 'write', 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      const given = body.slug === undefined ? undefined : promptSlug(body.slug);
      const definition = definitionOf(body, undefined);
      const id = crypto.randomUUID();
      const now = Date.now();
      const version = newVersion(req, id, org, 1, definition, body.version_description, now);
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.transaction(async (tx) => {
            await tx.insert(prompts, {
              id,
              organisation_id: org,
              workspace_id: workspaceId,
              name: body.name,
              slug,
              collection_id: body.collection_id ?? null,
              version: 1,
              published_version: 1,
              created_at: now,
              updated_at: now,
            });
            await tx.insert(promptVersions, version);
          }),
        (taken) => Errors.conflict(`The slug ${JSON.stringify(taken)} is already taken in this workspace`, 'slug'),
      );
      await store.changed();
      const row = await reread(id);
      req.audit = { resource: 'prompt', resourceId: id, action: 'create', workspaceId, after: presentPrompt(row, await versionRow(id, 1)) };
      return json({ object: 'prompt', id, slug: row.slug, version_id: version.id, version: 1 }, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/prompts/:promptId',
    scope: 'prompts.read',
    async handle(req) {
      const { row, version } = await lookup(req);
      await access.require(req, row.workspace_id, 'view', NOT_FOUND);
      return json(presentPrompt(row, await versionRow(row.id, version)));
    },
  };

  const versions: AdminRoute = {
    method: 'GET',
    path: '/prompts/:promptId/versions',
    scope: 'prompts.read',
    async handle(req) {
      const p = page(req.query);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'view', NOT_FOUND);
      const where: Where<typeof promptVersions.columns> = (c) => eq(c.prompt_id, row.id);
      const [total, rows] = await Promise.all([
        database.count(promptVersions, where),
        database.select(promptVersions, { where, orderBy: (c) => desc(c.version), limit: p.limit, offset: p.offset }),
      ]);
      return list(
        rows.map((v) => presentPromptVersion(v, row.published_version)),
        total,
      );
    },
  };

  const oneVersion: AdminRoute = {
    method: 'GET',
    path: '/prompts/:promptId/versions/:version',
    scope: 'prompts.read',
    async handle(req) {
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'view', NOT_FOUND);
      const asked = req.params.version ?? '';
      const n = asked === 'latest' ? row.version : Number(asked);
      if (!Number.isSafeInteger(n) || n < 1) throw Errors.badRequest('version must be a positive integer or latest', 'version');
      return json(presentPromptVersion(await versionRow(row.id, n), row.published_version));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/prompts/:promptId',
    scope: 'prompts.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      const addsVersion = givesVersion(body);
      if (!addsVersion && body.name === undefined && body.slug === undefined && body.collection_id === undefined)
        throw Errors.badRequest('Give a version (string or messages, parameters, …) or one of name, slug, collection_id', 'body');
      const before = await versionRow(row.id, row.version);
      const slug = body.slug === undefined ? row.slug : promptSlug(body.slug);
      const definition = addsVersion ? definitionOf(body, body.patch ? (before.definition as PromptDefinition) : undefined) : undefined;
      const version = definition ? row.version + 1 : row.version;
      const now = Date.now();
      try {
        await database.transaction(async (tx) => {
          const matched = await tx.update(
            prompts,
            { name: body.name ?? row.name, slug, collection_id: body.collection_id === undefined ? row.collection_id : body.collection_id, version, updated_at: now },
            // Only over the version read: two writers cannot both make version n+1.
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          );
          if (matched === 0) throw Errors.conflict('The prompt was changed by another request meanwhile; read it again and retry');
          if (definition) await tx.insert(promptVersions, newVersion(req, row.id, row.organisation_id, version, definition, body.version_description, now));
        });
      } catch (error) {
        if (isUniqueViolation(error) && slug !== row.slug) throw Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this workspace`, 'slug');
        if (isUniqueViolation(error)) throw Errors.conflict('The prompt was changed by another request meanwhile; read it again and retry');
        throw error;
      }
      await store.changed();
      const after = await reread(row.id);
      const latest = await versionRow(row.id, version);
      req.audit = { resource: 'prompt', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentPrompt(row, before), after: presentPrompt(after, latest) };
      return json(presentPrompt(after, latest));
    },
  };

  const makeDefault: AdminRoute = {
    method: 'PUT',
    path: '/prompts/:promptId/makeDefault',
    scope: 'prompts.write',
    async handle(req) {
      const { version } = checkMakeDefault(req.body);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      const chosen = await versionRow(row.id, version);
      await database.update(prompts, { published_version: version, updated_at: Date.now() }, (c) => eq(c.id, row.id));
      await store.changed();
      const after = await reread(row.id);
      req.audit = { resource: 'prompt', resourceId: row.id, action: 'publish', workspaceId: row.workspace_id, before: { published_version: row.published_version }, after: { published_version: version } };
      return json(presentPrompt(after, chosen));
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/prompts/:promptId',
    scope: 'prompts.delete',
    async handle(req) {
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      await database.transaction(async (tx) => {
        await tx.delete(promptVersions, (c) => eq(c.prompt_id, row.id));
        await tx.delete(prompts, (c) => eq(c.id, row.id));
      });
      await store.changed();
      req.audit = { resource: 'prompt', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentPromptSummary(row) };
      return noContent();
    },
  };

  return [list_, create, get, versions, oneVersion, update, makeDefault, remove];
}
