/**
 * The /api-keys routes (SPEC.md "API keys (administration)"): list, create, read, update, delete, rotate, and the
 * one-time pickup of a scheduled rotation's secret. Everything a request says is checked before anything is
 * written; each change fills `req.audit` with the key as shown (never a secret or hash).
 */
import { csv, json, type LimitServices, list, noContent, type OrganisationSettingsService, page, removeLimits, requireOrgAdmin, requireWorkspaceRole, saveLimits } from '@gateway/admin-kit';
import { lookupUser, lookupWorkspace, workspaceMembers } from '@gateway/admin-identity';
import {
  type AdminRequest,
  type AdminRoute,
  and,
  API_KEY_TYPES,
  type ApiKeyType,
  desc,
  eq,
  Errors,
  inArray,
  or,
  type Columns,
  type Database,
  type SQL,
} from '@gateway/sdk';
import { adminWorkspaces, requireHoldsKeyRole, requireManage, requireMayMakeKeyFor, requireOwnPickup, requireRead, requireRotate } from './access.ts';
import type { ApiKeyClock } from './clock.ts';
import type { KeyNotices } from './notices.ts';
import { futureInstant, resolvePolicy } from './policy.ts';
import { checkCreate, checkRotate, checkUpdate } from './schemas.ts';
import { grants, ROTATE_SCOPES, type ScopeCatalogue } from './scopes.ts';
import type { ApiKeyStore, KeyChanges } from './store.ts';
import { apiKeys, type ApiKeyRow } from './tables.ts';
import { prepareKeyLimits, withKeyLimits } from './limits.ts';
import { selfView } from './self.ts';
import { view } from './view.ts';

export interface RouteDeps {
  database: Database;
  keys: ApiKeyStore;
  scopes: ScopeCatalogue;
  clock: ApiKeyClock;
  notices: KeyNotices;
  /** Service `organisationSettings` when the settings plugin is loaded (looked up per call: load order is free). */
  settings: () => OrganisationSettingsService | undefined;
  /** Services `usageLimits` and `rateLimits` while their limits are on (the keys' `usage_limits` and `rate_limits`). */
  limits: () => LimitServices;
}

const WORKSPACE_TYPES: readonly ApiKeyType[] = ['workspace-service', 'workspace-user'];

/** The period enforced on a workspace-user key of `workspaceId`; null for other keys or without settings. */
export async function enforcedPeriod(deps: Pick<RouteDeps, 'settings'>, organisationId: string, type: ApiKeyType, workspaceId: string | null) {
  if (type !== 'workspace-user') return null;
  const settings = deps.settings();
  return settings ? (await settings.keySettings(organisationId, workspaceId)).user_api_key_rotation_period : null;
}

/** Scopes of the catalogue only, and none the caller lacks (a `*` caller may grant anything). */
function checkScopes(deps: RouteDeps, req: AdminRequest, scopes: readonly string[], already: readonly string[] = []): void {
  scopes.forEach((scope, i) => {
    if (!deps.scopes.has(scope)) throw Errors.badRequest(`scopes[${i}]: unknown scope ${JSON.stringify(scope)}`, `scopes[${i}]`);
  });
  const lacking = scopes.filter((s) => !already.includes(s) && !grants(req.caller.scopes, s));
  if (lacking.length) throw Errors.forbidden(`This API key cannot grant scopes it does not have: ${lacking.join(', ')}`);
}

async function loadKey(deps: RouteDeps, req: AdminRequest): Promise<ApiKeyRow> {
  const key = await deps.keys.get(req.caller.organisationId, req.params.apiKeyId ?? '');
  if (!key) throw Errors.notFound('No such API key');
  return key;
}

function audit(req: AdminRequest, row: ApiKeyRow, action: string, before: unknown, after: unknown): void {
  req.audit = { resource: 'api_key', resourceId: row.id, action, workspaceId: row.workspace_id, before, after };
}

async function create(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const body = checkCreate(req.body);
  const org = req.caller.organisationId;
  const now = deps.clock.now();
  const workspaceType = body.type !== 'organisation-service';
  if (!workspaceType && body.workspace_id !== undefined) throw Errors.badRequest('workspace_id: an organisation-service key belongs to no workspace', 'workspace_id');
  if (workspaceType && body.workspace_id === undefined) throw Errors.badRequest(`workspace_id is required for a ${body.type} key`, 'workspace_id');
  if (body.type === 'workspace-user' && body.user_id === undefined) throw Errors.badRequest('user_id is required for a workspace-user key', 'user_id');
  if (body.type !== 'workspace-user' && body.user_id !== undefined) throw Errors.badRequest('user_id: only a workspace-user key belongs to a user', 'user_id');
  const expiresAt = body.expires_at == null ? null : futureInstant(body.expires_at, 'expires_at', now);

  let workspaceId: string | null = null;
  if (body.workspace_id !== undefined) {
    const workspace = await lookupWorkspace(deps.database, org, body.workspace_id, { fresh: true });
    if (!workspace) throw Errors.badRequest(`workspace_id: no workspace ${JSON.stringify(body.workspace_id)} in this organisation`, 'workspace_id');
    if (workspace.status !== 'active') throw Errors.badRequest('workspace_id: the workspace is archived', 'workspace_id');
    workspaceId = workspace.id;
  }
  if (workspaceId !== null) await requireWorkspaceRole(req.principal, workspaceId, 'admin');
  else requireOrgAdmin(req.principal);
  checkScopes(deps, req, body.scopes);

  if (body.user_id !== undefined && workspaceId !== null) {
    const user = await lookupUser(deps.database, org, body.user_id, { fresh: true });
    if (!user) throw Errors.badRequest('user_id: no such user in this organisation', 'user_id');
    const wsId = workspaceId;
    const member = await deps.database.count(workspaceMembers, (c) => and(eq(c.workspace_id, wsId), eq(c.user_id, user.id)), { fresh: true });
    if (member === 0 && user.role !== 'owner' && user.role !== 'admin') throw Errors.badRequest('user_id: the user is not a member of the workspace', 'user_id');
    if (user.id !== req.caller.userId) await requireMayMakeKeyFor(deps.database, req.principal, user);
  }
  const policy = resolvePolicy(body.rotation_policy, { now, enforced: await enforcedPeriod(deps, org, body.type, workspaceId) });
  const limits = await prepareKeyLimits(deps.limits(), { id: '', organisation_id: org, workspace_id: workspaceId, name: body.name }, body);

  const { row, secret } = await deps.keys.create({
    organisation_id: org,
    workspace_id: workspaceId,
    user_id: body.user_id ?? null,
    name: body.name,
    description: body.description ?? null,
    type: body.type,
    scopes: body.scopes,
    expires_at: expiresAt,
    ...policy,
  });
  await saveLimits(limits, row.id);
  const [shown] = await withKeyLimits(deps.limits(), [view(row, now)]);
  audit(req, row, 'create', null, shown);
  return json({ ...shown, key: secret }, 201);
}

type KeyColumns = Columns<(typeof apiKeys)['columns']>;

async function listKeys(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const org = req.caller.organisationId;
  const { offset, limit } = page(req.query);
  let workspaceId: string | undefined;
  const workspaceParam = req.query.get('workspace_id');
  if (workspaceParam !== null) {
    const workspace = await lookupWorkspace(deps.database, org, workspaceParam);
    if (!workspace) throw Errors.badRequest(`workspace_id: no workspace ${JSON.stringify(workspaceParam)} in this organisation`, 'workspace_id');
    workspaceId = workspace.id;
  }
  const types = csv(req.query, 'type') as ApiKeyType[] | undefined;
  if (types && (types.length === 0 || types.some((t) => !API_KEY_TYPES.includes(t))))
    throw Errors.badRequest(`type must be a comma list of ${API_KEY_TYPES.join(', ')}`, 'type');
  const userId = req.query.get('user_id');
  const visibility = req.principal.isOrgAdmin ? undefined : await visibleTo(deps.database, req);
  const where = (c: KeyColumns) =>
    and(
      eq(c.organisation_id, org),
      workspaceId === undefined ? undefined : eq(c.workspace_id, workspaceId),
      types ? inArray(c.type, types) : undefined,
      userId === null ? undefined : eq(c.user_id, userId),
      visibility?.(c),
    );
  const [rows, total] = await Promise.all([
    deps.database.select(apiKeys, { where, orderBy: (c) => [desc(c.created_at), desc(c.id)], offset, limit }),
    deps.database.count(apiKeys, where),
  ]);
  const now = deps.clock.now();
  return list(await withKeyLimits(deps.limits(), rows.map((r) => view(r, now))), total);
}

/** What a caller without the organisation admin role sees: the workspace keys where it is admin, and its own keys. */
async function visibleTo(database: Database, req: AdminRequest): Promise<(c: KeyColumns) => SQL | undefined> {
  const admin = await adminWorkspaces(database, req.principal);
  const userId = req.caller.userId;
  return (c) =>
    or(
      admin.length ? and(inArray(c.workspace_id, admin), inArray(c.type, [...WORKSPACE_TYPES])) : undefined,
      userId ? and(eq(c.user_id, userId), eq(c.type, 'workspace-user')) : undefined,
      // Nothing visible: a condition that holds for no row.
      admin.length === 0 && !userId ? eq(c.id, '') : undefined,
    );
}

async function read(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const key = await loadKey(deps, req);
  await requireRead(req.principal, key);
  const [shown] = await withKeyLimits(deps.limits(), [view(key, deps.clock.now())]);
  return json(shown);
}

async function update(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const key = await loadKey(deps, req);
  await requireManage(req.principal, key);
  await requireHoldsKeyRole(deps.database, req.principal, key);
  const body = checkUpdate(req.body);
  const now = deps.clock.now();
  const changes: KeyChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description;
  if (body.scopes !== undefined) {
    checkScopes(deps, req, body.scopes, key.scopes);
    changes.scopes = body.scopes;
  }
  if (body.expires_at !== undefined) changes.expires_at = body.expires_at === null ? null : futureInstant(body.expires_at, 'expires_at', now);
  if (body.status !== undefined) changes.status = body.status;
  const policy = resolvePolicy(body.rotation_policy, {
    now,
    enforced: await enforcedPeriod(deps, key.organisation_id, key.type, key.workspace_id),
    current: key,
  });
  if (policy) Object.assign(changes, policy);
  const limits = await prepareKeyLimits(deps.limits(), key, body);
  const [before] = await withKeyLimits(deps.limits(), [view(key, now)]);
  const updated = await deps.keys.update(key, changes);
  await saveLimits(limits);
  const [after] = await withKeyLimits(deps.limits(), [view(updated, now)]);
  audit(req, updated, 'update', before, after);
  return json(after);
}

async function remove(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const key = await loadKey(deps, req);
  await requireManage(req.principal, key);
  await requireHoldsKeyRole(deps.database, req.principal, key);
  await deps.keys.remove(key);
  await removeLimits(deps.limits(), [{ kind: 'api_key', id: key.id, workspaceId: null }]);
  audit(req, key, 'delete', view(key, deps.clock.now()), null);
  return noContent();
}

async function rotate(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const key = await loadKey(deps, req);
  await requireRotate(req.principal, key);
  await requireHoldsKeyRole(deps.database, req.principal, key);
  const body = checkRotate(req.body);
  const now = deps.clock.now();
  if (key.status !== 'active') throw Errors.conflict('A revoked key cannot be rotated; set its status to active first', 'status');
  if (key.expires_at !== null && key.expires_at <= now) throw Errors.conflict('An expired key cannot be rotated; extend its expires_at first', 'expires_at');
  const rotated = await deps.keys.rotate(key, { transitionMs: body.key_transition_period_ms, scheduled: false });
  if (!rotated) throw Errors.conflict('The key was rotated by another request at the same time; read it and try again');
  deps.notices.inBackground(() => deps.notices.rotationCompleted(rotated.row, false));
  const shown = view(rotated.row, now);
  audit(req, rotated.row, 'rotate', view(key, now), shown);
  return json({ ...shown, key: rotated.secret });
}

async function reveal(deps: RouteDeps, req: AdminRequest): Promise<Response> {
  const key = await loadKey(deps, req);
  await requireRotate(req.principal, key);
  requireOwnPickup(req.principal, key);
  await requireHoldsKeyRole(deps.database, req.principal, key);
  const revealed = await deps.keys.reveal(key);
  if (!revealed) throw Errors.notFound('No rotated secret waits to be picked up for this key (it is handed out once)');
  const now = deps.clock.now();
  const shown = view(revealed.row, now);
  audit(req, revealed.row, 'reveal', null, shown);
  return json({ id: key.id, key: revealed.secret, key_transition_expires_at: shown.key_transition_expires_at });
}

export function apiKeyRoutes(deps: RouteDeps): AdminRoute[] {
  return [
    { method: 'GET', path: '/api-keys', scope: 'api_keys.read', handle: (req) => listKeys(deps, req) },
    // Any key with any scope may ask what it is (self.ts); a key without scopes is refused as everywhere.
    { method: 'GET', path: '/api-keys/self', scope: deps.scopes.any, handle: (req) => selfView(deps, req) },
    { method: 'POST', path: '/api-keys', scope: 'api_keys.write', handle: (req) => create(deps, req) },
    { method: 'GET', path: '/api-keys/:apiKeyId', scope: 'api_keys.read', handle: (req) => read(deps, req) },
    { method: 'PUT', path: '/api-keys/:apiKeyId', scope: 'api_keys.write', handle: (req) => update(deps, req) },
    { method: 'DELETE', path: '/api-keys/:apiKeyId', scope: 'api_keys.delete', handle: (req) => remove(deps, req) },
    { method: 'POST', path: '/api-keys/:apiKeyId/rotate', scope: ROTATE_SCOPES, handle: (req) => rotate(deps, req) },
    { method: 'POST', path: '/api-keys/:apiKeyId/reveal', scope: ROTATE_SCOPES, handle: (req) => reveal(deps, req) },
  ];
}
