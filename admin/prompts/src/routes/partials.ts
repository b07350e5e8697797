/**
 * /prompts/partials: templates that prompts of the same workspace include as `{{> slug}}` (the partial's published
 * version). Versions and publishing as for prompts; the same access rules.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkSlug, invalidBody, isUniqueViolation, json, list, noContent, page, slugBase, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, desc, eq, Errors, inArray, type SQL, sql, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { PromptAccessRules } from '../access.ts';
import { checkMakeDefault } from '../body.ts';
import { type PartialRow, type PartialVersionRow, presentPartial, presentPartialSummary, presentPartialVersion } from '../present.ts';
import { parseReference, type PromptStore, versionNumber } from '../store.ts';
import { promptPartials, promptPartialVersions } from '../tables.ts';
import { syntaxError } from '../template.ts';
import { containsPattern } from './prompts.ts';

export interface PartialRouteDeps {
  database: Database;
  store: PromptStore;
  access: PromptAccessRules;
}

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Content = Type.String({ maxLength: 1_000_000 });
const Description = Type.String({ maxLength: 10_000 });

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      string: Content,
      version_description: Type.Optional(Description),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object({ name: Type.Optional(Name), string: Type.Optional(Content), version_description: Type.Optional(Description) }, { additionalProperties: false }),
);

const NOT_FOUND = 'No such partial';
const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;

function checkedContent(content: string): string {
  const error = syntaxError(content);
  if (error) throw invalidBody([`string: not a valid Mustache template (${error})`], 'string');
  return content;
}

export function partialRoutes(deps: PartialRouteDeps): AdminRoute[] {
  const { database, store, access } = deps;

  async function lookup(req: AdminRequest): Promise<{ row: PartialRow; version: number }> {
    const org = req.caller.organisationId;
    const { ref, choice } = parseReference(req.params.partialId ?? '');
    let [row] = await database.select(promptPartials, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (!row) {
      const hint = req.query.get('workspace_id');
      const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
      [row] = await database.select(promptPartials, { where: (c) => and(eq(c.organisation_id, org), eq(c.workspace_id, workspaceId), eq(c.slug, ref)), limit: 1, fresh: true });
    }
    if (!row) throw Errors.notFound(NOT_FOUND);
    return { row, version: versionNumber({ version: row.version, publishedVersion: row.published_version }, choice) };
  }

  async function versionRow(partialId: string, n: number): Promise<PartialVersionRow> {
    const [row] = await database.select(promptPartialVersions, { where: (c) => and(eq(c.partial_id, partialId), eq(c.version, n)), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(`The partial has no version ${n}`);
    return row;
  }

  const reread = async (id: string) => {
    const [row] = await database.select(promptPartials, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  const newVersion = (req: AdminRequest, partialId: string, org: string, version: number, content: string, description: string | undefined, now: number) => ({
    id: crypto.randomUUID(),
    partial_id: partialId,
    organisation_id: org,
    version,
    content,
    description: description ?? null,
    created_by_key: req.caller.apiKeyId,
    created_by_user: req.caller.userId,
    created_at: now,
  });

  const list_: AdminRoute = {
    method: 'GET',
    path: '/prompts/partials',
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
        if (candidates !== 'all') {
          const allowed = await Promise.all(candidates.map((ws) => access.require(req, ws, 'view', NOT_FOUND).then(() => true, () => false)));
          candidates = candidates.filter((_, i) => allowed[i]);
        }
      }
      const visible = candidates;
      const name = req.query.get('name');
      const where: Where<typeof promptPartials.columns> = (c) => {
        const parts: SQL[] = [eq(c.organisation_id, org)];
        if (visible !== 'all') parts.push(visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
        if (name) parts.push(sql`lower(${c.name}) like ${containsPattern(name)} escape '!'`);
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(promptPartials, where),
        database.select(promptPartials, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentPartialSummary), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/prompts/partials',
    scope: 'prompts.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await access.require(req, workspace.id, 'write', 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      // The slug is what templates write in {{> …}}: made from the name, never with a random suffix.
      const slug = checkSlug(body.slug ?? slugBase(body.name, 64));
      const content = checkedContent(body.string);
      const id = crypto.randomUUID();
      const now = Date.now();
      const version = newVersion(req, id, org, 1, content, body.version_description, now);
      try {
        await database.transaction(async (tx) => {
          await tx.insert(promptPartials, { id, organisation_id: org, workspace_id: workspaceId, name: body.name, slug, version: 1, published_version: 1, created_at: now, updated_at: now });
          await tx.insert(promptPartialVersions, version);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this workspace`, 'slug');
        throw error;
      }
      await store.changed();
      const row = await reread(id);
      req.audit = { resource: 'prompt_partial', resourceId: id, action: 'create', workspaceId, after: presentPartial(row, version) };
      return json({ object: 'prompt_partial', id, slug, version_id: version.id, version: 1 }, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/prompts/partials/:partialId',
    scope: 'prompts.read',
    async handle(req) {
      const { row, version } = await lookup(req);
      await access.require(req, row.workspace_id, 'view', NOT_FOUND);
      return json(presentPartial(row, await versionRow(row.id, version)));
    },
  };

  const versions: AdminRoute = {
    method: 'GET',
    path: '/prompts/partials/:partialId/versions',
    scope: 'prompts.read',
    async handle(req) {
      const p = page(req.query);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'view', NOT_FOUND);
      const where: Where<typeof promptPartialVersions.columns> = (c) => eq(c.partial_id, row.id);
      const [total, rows] = await Promise.all([
        database.count(promptPartialVersions, where),
        database.select(promptPartialVersions, { where, orderBy: (c) => desc(c.version), limit: p.limit, offset: p.offset }),
      ]);
      return list(
        rows.map((v) => presentPartialVersion(v, row.published_version)),
        total,
      );
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/prompts/partials/:partialId',
    scope: 'prompts.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      if (body.name === undefined && body.string === undefined) throw Errors.badRequest('Give string (a new version) or name', 'body');
      const content = body.string === undefined ? undefined : checkedContent(body.string);
      const version = content === undefined ? row.version : row.version + 1;
      const now = Date.now();
      try {
        await database.transaction(async (tx) => {
          const matched = await tx.update(promptPartials, { name: body.name ?? row.name, version, updated_at: now }, (c) => and(eq(c.id, row.id), eq(c.version, row.version)));
          if (matched === 0) throw Errors.conflict('The partial was changed by another request meanwhile; read it again and retry');
          if (content !== undefined) await tx.insert(promptPartialVersions, newVersion(req, row.id, row.organisation_id, version, content, body.version_description, now));
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw Errors.conflict('The partial was changed by another request meanwhile; read it again and retry');
        throw error;
      }
      await store.changed();
      const after = presentPartial(await reread(row.id), await versionRow(row.id, version));
      req.audit = { resource: 'prompt_partial', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentPartialSummary(row), after };
      return json(after);
    },
  };

  const makeDefault: AdminRoute = {
    method: 'PUT',
    path: '/prompts/partials/:partialId/makeDefault',
    scope: 'prompts.write',
    async handle(req) {
      const { version } = checkMakeDefault(req.body);
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      const chosen = await versionRow(row.id, version);
      await database.update(promptPartials, { published_version: version, updated_at: Date.now() }, (c) => eq(c.id, row.id));
      await store.changed();
      req.audit = { resource: 'prompt_partial', resourceId: row.id, action: 'publish', workspaceId: row.workspace_id, before: { published_version: row.published_version }, after: { published_version: version } };
      return json(presentPartial(await reread(row.id), chosen));
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/prompts/partials/:partialId',
    scope: 'prompts.delete',
    async handle(req) {
      const { row } = await lookup(req);
      await access.require(req, row.workspace_id, 'write', NOT_FOUND);
      await database.transaction(async (tx) => {
        await tx.delete(promptPartialVersions, (c) => eq(c.partial_id, row.id));
        await tx.delete(promptPartials, (c) => eq(c.id, row.id));
      });
      await store.changed();
      req.audit = { resource: 'prompt_partial', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentPartialSummary(row) };
      return noContent();
    },
  };

  return [list_, create, get, versions, update, makeDefault, remove];
}
