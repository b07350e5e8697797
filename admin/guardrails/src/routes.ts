/**
 * /guardrails: saved guardrails of a workspace, or of the whole organisation (workspace_id null). Workspace members
 * read their workspace's and the organisation's; workspace managers and admins change their workspace's;
 * organisation owners and admins change organisation-wide ones. Every change reloads the in-memory set here and
 * in every other process before the answer.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import {
  checkSlug,
  conflictOnUnique,
  csv,
  type DocumentFields,
  json,
  list,
  noContent,
  openSecrets,
  page,
  requireOrgAdmin,
  requireWorkspaceRole,
  restoreMasked,
  type SecretBox,
  type StoredDocument,
  sealSecrets,
  validator,
  writeWithSlug,
} from '@gateway/admin-kit';
import {
  type AdminRequest,
  type AdminRoute,
  and,
  asc,
  type ConfigValidator,
  type Database,
  desc,
  eq,
  Errors,
  inArray,
  isNull,
  type JsonObject,
  or,
  type Principal,
  type SQL,
  type Where,
} from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { GuardrailReferences } from './contracts.ts';
import { entryViolations } from './entry.ts';
import { type GuardrailRow, presentGuardrail } from './present.ts';
import type { GuardrailStore } from './store.ts';
import { guardrailSecretsAt, ORGANISATION_SCOPE, savedGuardrails } from './tables.ts';

export const SCOPES = ['guardrails.read', 'guardrails.write', 'guardrails.delete'] as const;

export interface GuardrailRouteDeps {
  database: Database;
  store: GuardrailStore;
  box: () => SecretBox;
  /** The saved-config plugin's reference check, when it is loaded. */
  references: () => GuardrailReferences | undefined;
  /** The host's config validation (service `configValidator`): an entry is checked as a config's is. */
  validator: ConfigValidator;
  /** Which keys of an entry are secrets and which decide where they go (the loaded plugins' declarations). */
  fields: () => DocumentFields;
}

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Slug = Type.String({ minLength: 1, maxLength: 64 });
const Entry = Type.Object({}, { additionalProperties: true });

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Slug),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      organisation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      entry: Entry,
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(Type.Object({ name: Type.Optional(Name), slug: Type.Optional(Slug), entry: Type.Optional(Entry) }, { additionalProperties: false }));

const NOT_FOUND = 'No such guardrail';
/** A workspace named by `workspace_id` (body or query), read from the writer; 404 naming the field. */
const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;

/** 400 listing every violation of an entry; the entry with its secrets otherwise (masks put back where allowed). */
function checkedEntry(entry: JsonObject, previous: StoredDocument, validator: ConfigValidator, fields: DocumentFields): JsonObject {
  const restored = restoreMasked(entry, previous, 'entry', fields);
  const violations = [...restored.problems, ...entryViolations(restored.value, validator)];
  if (violations.length > 0) throw Errors.badRequest(`Invalid guardrail: ${violations.join('; ')}`, 'entry');
  return restored.value;
}

export function guardrailRoutes(deps: GuardrailRouteDeps): AdminRoute[] {
  const { database, store } = deps;

  /** The entry masked, its secrets sealed for the guardrail `id`. */
  const sealed = (entry: JsonObject, id: string) => {
    const { masked, sealed } = sealSecrets(entry, deps.box, guardrailSecretsAt(id), deps.fields());
    return { entry: masked, secrets: sealed };
  };

  /** A guardrail of the caller's organisation by id, or by slug (in `workspace_id` of the query or the caller's, then organisation-wide). */
  async function lookup(req: AdminRequest): Promise<GuardrailRow> {
    const org = req.caller.organisationId;
    const ref = req.params.guardrailId ?? '';
    const [byId] = await database.select(savedGuardrails, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (byId) return byId;
    const hint = req.query.get('workspace_id');
    const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
    const rows = await database.select(savedGuardrails, {
      where: (c) => and(eq(c.organisation_id, org), eq(c.slug, ref), inArray(c.scope, [workspaceId, ORGANISATION_SCOPE])),
      fresh: true,
    });
    const row = rows.find((r) => r.workspace_id === workspaceId) ?? rows[0];
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  }

  /** Read: any role in its workspace; organisation-wide: anyone of the organisation. */
  async function readable(principal: Principal, row: GuardrailRow): Promise<void> {
    if (row.workspace_id !== null) await requireWorkspaceRole(principal, row.workspace_id, 'member', NOT_FOUND);
  }

  /** Change: manager of its workspace; organisation-wide: organisation owner or admin. */
  async function writable(principal: Principal, row: GuardrailRow): Promise<void> {
    if (row.workspace_id === null) requireOrgAdmin(principal);
    else await requireWorkspaceRole(principal, row.workspace_id, 'manager', NOT_FOUND);
  }

  async function referencesOf(row: GuardrailRow) {
    return (await deps.references()?.referencing({ id: row.id, organisationId: row.organisation_id, workspaceId: row.workspace_id, slug: row.slug })) ?? [];
  }

  const list_: AdminRoute = {
    method: 'GET',
    path: '/guardrails',
    scope: 'guardrails.read',
    feature: 'guardrails',
    async handle(req) {
      const p = page(req.query);
      const ids = csv(req.query, 'ids');
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let workspaceOnly: string | undefined;
      if (filter) {
        workspaceOnly = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await requireWorkspaceRole(req.principal, workspaceOnly, 'member', 'No such workspace: workspace_id');
      }
      const visible = workspaceOnly ? [workspaceOnly] : await visibleWorkspaces(database, req.principal);
      const where: Where<typeof savedGuardrails.columns> = (c) => {
        const parts: (SQL | undefined)[] = [eq(c.organisation_id, org)];
        if (workspaceOnly) parts.push(eq(c.workspace_id, workspaceOnly));
        else if (visible !== 'all') parts.push(visible.length > 0 ? or(isNull(c.workspace_id), inArray(c.workspace_id, visible)) : isNull(c.workspace_id));
        if (ids) parts.push(ids.length > 0 ? inArray(c.id, ids) : eq(c.id, ''));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(savedGuardrails, where),
        database.select(savedGuardrails, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentGuardrail), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/guardrails',
    scope: 'guardrails.write',
    feature: 'guardrails',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      let workspaceId: string | null;
      if (body.organisation_id !== undefined) {
        if (body.workspace_id !== undefined) throw Errors.badRequest('Give workspace_id or organisation_id, not both', 'organisation_id');
        if (body.organisation_id !== org) throw Errors.notFound('No such organisation: organisation_id');
        requireOrgAdmin(req.principal);
        workspaceId = null;
      } else {
        const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
        await requireWorkspaceRole(req.principal, workspace.id, 'manager', 'No such workspace: workspace_id');
        workspaceId = requireActive(workspace);
      }
      const entry = checkedEntry(body.entry as JsonObject, { masked: {}, secrets: [] }, deps.validator, deps.fields());
      const given = body.slug === undefined ? undefined : checkSlug(body.slug);
      const id = crypto.randomUUID();
      const now = Date.now();
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.insert(savedGuardrails, {
            id,
            organisation_id: org,
            workspace_id: workspaceId,
            scope: workspaceId ?? ORGANISATION_SCOPE,
            name: body.name,
            slug,
            ...sealed(entry, id),
            version: 1,
            created_at: now,
            updated_at: now,
          }),
        (taken) => Errors.conflict(`The slug ${JSON.stringify(taken)} is already taken in this scope`, 'slug'),
      );
      await store.changed();
      const [row] = await database.select(savedGuardrails, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
      if (!row) throw Errors.internal('The guardrail vanished after it was written');
      const view = presentGuardrail(row);
      req.audit = { resource: 'guardrail', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/guardrails/:guardrailId',
    scope: 'guardrails.read',
    feature: 'guardrails',
    async handle(req) {
      const row = await lookup(req);
      await readable(req.principal, row);
      return json(presentGuardrail(row));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/guardrails/:guardrailId',
    scope: 'guardrails.write',
    feature: 'guardrails',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await lookup(req);
      await writable(req.principal, row);
      if (body.name === undefined && body.slug === undefined && body.entry === undefined)
        throw Errors.badRequest('Give at least one of name, slug, entry', 'body');
      const entry = body.entry === undefined ? undefined : checkedEntry(body.entry as JsonObject, { masked: row.entry, secrets: openSecrets(row.secrets, deps.box, guardrailSecretsAt(row.id)) }, deps.validator, deps.fields());
      const slug = body.slug === undefined ? row.slug : checkSlug(body.slug);
      if (slug !== row.slug) {
        const bySlug = (await referencesOf(row)).filter((r) => r.by === 'slug');
        if (bySlug.length > 0)
          throw Errors.conflict(`Saved configs name this guardrail by its slug: ${bySlug.map((r) => r.id).join(', ')}; change them first`, 'slug');
      }
      const changed = await conflictOnUnique(
        () =>
          database.update(
            savedGuardrails,
            {
              name: body.name ?? row.name,
              slug,
              ...(entry ? sealed(entry, row.id) : {}),
              version: row.version + 1,
              updated_at: Date.now(),
            },
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          ),
        () => Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this scope`, 'slug'),
      );
      if (changed === 0) throw Errors.conflict('The guardrail was changed by another request meanwhile; read it again and retry');
      await store.changed();
      const [after] = await database.select(savedGuardrails, { where: (c) => eq(c.id, row.id), limit: 1, fresh: true });
      if (!after) throw Errors.notFound(NOT_FOUND);
      const view = presentGuardrail(after);
      req.audit = { resource: 'guardrail', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentGuardrail(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/guardrails/:guardrailId',
    scope: 'guardrails.delete',
    feature: 'guardrails',
    async handle(req) {
      const row = await lookup(req);
      await writable(req.principal, row);
      const using = await referencesOf(row);
      if (using.length > 0)
        throw Errors.conflict(`Saved configs use this guardrail: ${using.map((r) => r.id).join(', ')}; remove it from them first`);
      await database.delete(savedGuardrails, (c) => eq(c.id, row.id));
      await store.changed();
      req.audit = { resource: 'guardrail', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentGuardrail(row) };
      return noContent();
    },
  };

  return [list_, create, get, update, remove];
}
