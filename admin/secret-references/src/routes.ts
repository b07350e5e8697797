/**
 * /secret-references: list, create, read, update, delete. Organisation owners and admins only (and organisation-service
 * keys, which act as admins), with the secret_references.* scopes. Credentials are sealed before they are stored and
 * masked in every answer and audit entry.
 */
import { json, list, noContent, page, type SecretBox } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, eq, Errors, type OutboundGuard } from '@gateway/sdk';
import { type AuthConfig, HINTED_FIELDS, MANAGER_TYPES, MASK, type ManagerType, mergeAuth, withDefaults } from './kinds.ts';
import type { SecretReferenceService } from './service.ts';
import { allows, authConfigAt, findReference, openAuth, view } from './store.ts';
import { type SecretReferenceRow, secretReferences } from './tables.ts';
import { checkHosts, checkReference, checkUpdate, type KindBody, resolveWorkspaces } from './validate.ts';

export const SCOPES = ['secret_references.read', 'secret_references.write', 'secret_references.delete'] as const;

export interface RouteDeps {
  database: Database;
  box: SecretBox;
  hostGuard?: OutboundGuard;
  service: SecretReferenceService;
}

const PATH = '/secret-references';

/** What the audit log keeps: the answer's shape with every credential field masked whole. */
function auditView(box: SecretBox, row: SecretReferenceRow) {
  const shown = view(box, row);
  const auth = { ...shown.auth_config };
  for (const field of HINTED_FIELDS[row.manager_type]) if (typeof auth[field] === 'string') auth[field] = MASK;
  return { ...shown, auth_config: auth };
}

function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200);
  if (!base) return 'secret-reference';
  // A slug never reads as an id (lookups take either).
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(base) ? `ref-${base}` : base;
}

const isDuplicate = (error: unknown) => /unique|duplicate/i.test(error instanceof Error ? error.message : String(error));

async function slugTaken(database: Database, organisationId: string, slug: string, except?: string): Promise<boolean> {
  const [row] = await database.select(secretReferences, {
    fresh: true,
    where: (c) => and(eq(c.organisation_id, organisationId), eq(c.slug, slug)),
    limit: 1,
  });
  return row !== undefined && row.id !== except;
}

async function freeSlug(database: Database, organisationId: string, name: string): Promise<string> {
  const base = slugify(name);
  if (!(await slugTaken(database, organisationId, base))) return base;
  for (let n = 2; n < 20; n++) if (!(await slugTaken(database, organisationId, `${base}-${n}`))) return `${base}-${n}`;
  return `${base}-${crypto.randomUUID().slice(0, 8)}`;
}

/** The checked reference, with workspaces as ids and the stored auth config (defaults filled). */
async function prepare(deps: RouteDeps, organisationId: string, ref: KindBody, workspacesGiven: boolean, storedWorkspaces: string[]) {
  const auth = withDefaults(ref.manager_type, ref.auth_config as Record<string, unknown>);
  await checkHosts(ref.manager_type, auth, deps.hostGuard);
  const allowAll = ref.allow_all_workspaces === true;
  const allowed = allowAll ? [] : workspacesGiven ? await resolveWorkspaces(deps.database, organisationId, ref.allowed_workspaces ?? []) : storedWorkspaces;
  return { auth, allowAll, allowed };
}

async function loadOr404(deps: RouteDeps, req: AdminRequest): Promise<SecretReferenceRow> {
  const row = await findReference(deps.database, req.caller.organisationId, req.params.id as string, { fresh: true });
  if (!row) throw Errors.notFound('No such secret reference');
  return row;
}

export function secretReferenceRoutes(deps: RouteDeps): AdminRoute[] {
  const { database, box } = deps;
  const base = { role: 'admin' as const };

  const listRoute: AdminRoute = {
    ...base,
    method: 'GET',
    path: PATH,
    scope: 'secret_references.read',
    async handle(req) {
      const p = page(req.query);
      const type = req.query.get('manager_type');
      if (type !== null && !(MANAGER_TYPES as readonly string[]).includes(type))
        throw Errors.badRequest(`manager_type must be one of ${MANAGER_TYPES.join(', ')}`, 'manager_type');
      const workspaceId = req.query.get('workspace_id');
      // An organisation has few references: filter and page in memory.
      let rows = await database.select(secretReferences, {
        where: (c) => eq(c.organisation_id, req.caller.organisationId),
        orderBy: (c) => [asc(c.created_at), asc(c.id)],
      });
      if (type) rows = rows.filter((r) => r.manager_type === type);
      if (workspaceId) rows = rows.filter((r) => allows(r, workspaceId));
      return list(rows.slice(p.offset, p.offset + p.limit).map((r) => view(box, r)), rows.length);
    },
  };

  const createRoute: AdminRoute = {
    ...base,
    method: 'POST',
    path: PATH,
    scope: 'secret_references.write',
    async handle(req) {
      const organisationId = req.caller.organisationId;
      const ref = checkReference(req.body);
      const { auth, allowAll, allowed } = await prepare(deps, organisationId, ref, true, []);
      if (ref.slug && (await slugTaken(database, organisationId, ref.slug))) throw Errors.conflict(`slug ${ref.slug} is taken`, 'slug');
      const slug = ref.slug ?? (await freeSlug(database, organisationId, ref.name));
      const now = Date.now();
      const id = crypto.randomUUID();
      const row: SecretReferenceRow = {
        id,
        organisation_id: organisationId,
        name: ref.name,
        slug,
        description: ref.description ?? null,
        manager_type: ref.manager_type,
        auth_config: box.sealJson(auth, authConfigAt(id)),
        secret_path: ref.secret_path,
        secret_key: ref.secret_key ?? null,
        allow_all_workspaces: allowAll,
        allowed_workspaces: allowed,
        created_at: now,
        updated_at: now,
      };
      const inserted = await database.insert(secretReferences, row, { ignoreDuplicates: true });
      if (inserted === 0) throw Errors.conflict(`slug ${slug} is taken`, 'slug');
      await deps.service.changed(row.id);
      req.audit = { resource: 'secret_reference', resourceId: row.id, action: 'create', workspaceId: null, after: auditView(box, row) };
      return json(view(box, row), 201);
    },
  };

  const getRoute: AdminRoute = {
    ...base,
    method: 'GET',
    path: `${PATH}/:id`,
    scope: 'secret_references.read',
    async handle(req) {
      return json(view(box, await loadOr404(deps, req)));
    },
  };

  const updateRoute: AdminRoute = {
    ...base,
    method: 'PUT',
    path: `${PATH}/:id`,
    scope: 'secret_references.write',
    async handle(req) {
      const organisationId = req.caller.organisationId;
      const body = checkUpdate(req.body);
      const stored = await loadOr404(deps, req);
      const storedAuth = openAuth(box, stored) as Record<string, unknown>;
      const type: ManagerType = body.manager_type ?? stored.manager_type;
      // Another kind needs its whole auth config; the same kind merges (masked values sent back keep the stored ones).
      const auth = type !== stored.manager_type ? (body.auth_config ?? {}) : mergeAuth(type, storedAuth, body.auth_config ?? {});
      const allowAll = body.allow_all_workspaces ?? (body.allowed_workspaces?.length ? false : stored.allow_all_workspaces);
      const workspacesGiven = body.allowed_workspaces !== undefined;
      const merged = checkReference({
        name: body.name ?? stored.name,
        slug: body.slug ?? stored.slug,
        description: body.description === undefined ? stored.description : body.description,
        manager_type: type,
        auth_config: auth,
        secret_path: body.secret_path ?? stored.secret_path,
        secret_key: body.secret_key === undefined ? stored.secret_key : body.secret_key,
        allow_all_workspaces: allowAll,
        // Stored ids stand for themselves; only a list given now is looked up again.
        allowed_workspaces: allowAll ? (body.allowed_workspaces ?? []) : (body.allowed_workspaces ?? stored.allowed_workspaces),
      });
      const prepared = await prepare(deps, organisationId, merged, workspacesGiven, stored.allowed_workspaces);
      if (merged.slug !== stored.slug && (await slugTaken(database, organisationId, merged.slug as string, stored.id)))
        throw Errors.conflict(`slug ${merged.slug} is taken`, 'slug');
      const values = {
        name: merged.name,
        slug: merged.slug as string,
        description: merged.description ?? null,
        manager_type: merged.manager_type,
        auth_config: box.sealJson(prepared.auth as AuthConfig, authConfigAt(stored.id)),
        secret_path: merged.secret_path,
        secret_key: merged.secret_key ?? null,
        allow_all_workspaces: prepared.allowAll,
        allowed_workspaces: prepared.allowed,
        // Strictly later than before: the fetched-secret cache is keyed by it.
        updated_at: Math.max(Date.now(), stored.updated_at + 1),
      };
      try {
        await database.update(secretReferences, values, (c) => and(eq(c.id, stored.id), eq(c.organisation_id, organisationId)));
      } catch (error) {
        if (isDuplicate(error)) throw Errors.conflict(`slug ${values.slug} is taken`, 'slug');
        throw error;
      }
      const row: SecretReferenceRow = { ...stored, ...values };
      await deps.service.changed(row.id);
      req.audit = {
        resource: 'secret_reference',
        resourceId: row.id,
        action: 'update',
        workspaceId: null,
        before: auditView(box, stored),
        after: auditView(box, row),
      };
      return json(view(box, row));
    },
  };

  const deleteRoute: AdminRoute = {
    ...base,
    method: 'DELETE',
    path: `${PATH}/:id`,
    scope: 'secret_references.delete',
    async handle(req) {
      const stored = await loadOr404(deps, req);
      await database.delete(secretReferences, (c) => and(eq(c.id, stored.id), eq(c.organisation_id, req.caller.organisationId)));
      await deps.service.changed(stored.id);
      req.audit = { resource: 'secret_reference', resourceId: stored.id, action: 'delete', workspaceId: null, before: auditView(box, stored) };
      return noContent();
    },
  };

  return [listRoute, createRoute, getRoute, updateRoute, deleteRoute];
}

