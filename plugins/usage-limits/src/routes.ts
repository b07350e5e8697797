/**
 * /policies/usage-limits (docs/admin/policies.md). Organisation owners and admins (and organisation-service keys)
 * manage the organisation's policies, as for rate limits; a DELETE archives (kept, shown with status `archived`, no
 * longer enforced). GET and LIST show each group's usage in the current period. Every change reloads the limits here
 * and in every other process before the answer.
 */
import { findWorkspace, lookupWorkspace, requireActive } from '@gateway/admin-identity';
import { json, list, noContent, page, requireOrgAdmin, validator } from '@gateway/admin-kit';
import { conditionViolations, groupByViolations, type PolicyCondition, type PolicyGroupBy } from '@gateway/policy-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, desc, eq, Errors, type SQL, type StateStore, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { Groups } from './groups.ts';
import { LIMIT_TYPES, readSettings, refuse } from './input.ts';
import { fieldsOf, settingsView, usageOf } from './limits.ts';
import type { LimitStore } from './store.ts';
import { type UsageLimitRow, usageLimits } from './table.ts';

export const SCOPES = ['usage_limits_policies.read', 'usage_limits_policies.write', 'usage_limits_policies.delete'] as const;

const STATUSES = ['active', 'archived'] as const;
const Name = Type.String({ minLength: 1, maxLength: 255 });
// Values are checked by readSettings (one message per field, in the shared rules); the schema says which fields exist.
const settingFields = {
  credit_limit: Type.Optional(Type.Unknown()),
  alert_threshold: Type.Optional(Type.Unknown()),
  periodic_reset: Type.Optional(Type.Unknown()),
  periodic_reset_days: Type.Optional(Type.Unknown()),
  next_usage_reset_at: Type.Optional(Type.Unknown()),
  conditions: Type.Optional(Type.Unknown()),
  group_by: Type.Optional(Type.Unknown()),
};
const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      type: Type.Union(LIMIT_TYPES.map((t) => Type.Literal(t))),
      ...settingFields,
      credit_limit: Type.Unknown(),
      workspace_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object({ name: Type.Optional(Name), ...settingFields, status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))) }, { additionalProperties: false }),
);

/** A query filter that must be one of `allowed`, or absent; 400 naming it otherwise. */
function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw Errors.badRequest(`${name} must be one of ${allowed.join(', ')}`, name);
  return v as T;
}

export function present(row: UsageLimitRow) {
  return {
    id: row.id,
    object: 'policy_usage_limits' as const,
    name: row.name,
    ...settingsView(row),
    status: row.status,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    conditions: row.conditions,
    group_by: row.group_by,
    created_at: new Date(row.created_at).toISOString(),
    last_updated_at: new Date(row.last_updated_at).toISOString(),
  };
}

const NOT_FOUND = 'No such usage limits policy';

export interface RouteDeps {
  database: Database;
  store: LimitStore;
  state: StateStore;
  groups: Groups;
}

export function usageLimitRoutes({ database, store, state, groups }: RouteDeps): AdminRoute[] {
  const common = { feature: 'usageLimits' } as const;
  const withUsage = async (row: UsageLimitRow) => ({ ...present(row), current_usage: await usageOf(row, state, groups) });

  async function find(req: AdminRequest): Promise<UsageLimitRow> {
    const id = req.params.id ?? '';
    const [row] = await database.select(usageLimits, {
      where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.kind, 'policy'), eq(c.id, id)),
      limit: 1,
      fresh: true,
    });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  }

  const reread = async (id: string): Promise<UsageLimitRow> => {
    const [row] = await database.select(usageLimits, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  /** Settings, conditions and group_by of a body, every violation in one 400. */
  function read(body: Record<string, unknown>, before: UsageLimitRow | undefined) {
    const violations: string[] = [];
    const settings = readSettings(body, '', Date.now(), violations);
    if (body.conditions !== undefined) violations.push(...conditionViolations(body.conditions));
    if (body.group_by !== undefined) violations.push(...groupByViolations(body.group_by));
    const fields = fieldsOf(settings, before, '', violations);
    if (violations.length) refuse(violations);
    const rules: { conditions?: PolicyCondition[]; group_by?: PolicyGroupBy[] } = {};
    // Stored as {key, value} / {key} only, in the order given.
    if (body.conditions !== undefined) rules.conditions = (body.conditions as PolicyCondition[]).map(({ key, value }) => ({ key, value }));
    if (body.group_by !== undefined) rules.group_by = (body.group_by as PolicyGroupBy[]).map(({ key }) => ({ key }));
    return { fields, rules };
  }

  return [
    {
      ...common,
      method: 'POST',
      path: '/policies/usage-limits',
      scope: 'usage_limits_policies.write',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const body = checkCreate(req.body);
        const { fields, rules } = read(body, undefined);
        const org = req.caller.organisationId;
        const workspaceId = body.workspace_id ? requireActive(await findWorkspace(database, org, body.workspace_id, { fresh: true, param: 'workspace_id' })) : null;
        const now = Date.now();
        const id = crypto.randomUUID();
        await database.insert(usageLimits, {
          id,
          organisation_id: org,
          workspace_id: workspaceId,
          kind: 'policy',
          subject: id,
          subject_id: null,
          name: body.name,
          ...fields,
          conditions: rules.conditions ?? [],
          group_by: rules.group_by ?? [],
          status: 'active',
          created_at: now,
          last_updated_at: now,
        });
        const created = await reread(id);
        await store.changed();
        req.audit = { resource: 'usage_limits_policy', resourceId: id, workspaceId, after: present(created) };
        return json(await withUsage(created), 201);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/policies/usage-limits',
      scope: 'usage_limits_policies.read',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const p = page(req.query);
        const org = req.caller.organisationId;
        const status = oneOf(req.query, 'status', STATUSES);
        const type = oneOf(req.query, 'type', LIMIT_TYPES);
        const ws = req.query.get('workspace_id');
        // An unknown workspace lists nothing (as another organisation's would).
        const workspaceId = ws ? ((await lookupWorkspace(database, org, ws))?.id ?? '') : undefined;
        const where: Where<typeof usageLimits.columns> = (c) => {
          const parts: SQL[] = [eq(c.organisation_id, org), eq(c.kind, 'policy')];
          if (status) parts.push(eq(c.status, status));
          if (type) parts.push(eq(c.type, type));
          if (workspaceId !== undefined) parts.push(eq(c.workspace_id, workspaceId));
          return and(...parts);
        };
        const [total, rows] = await Promise.all([
          database.count(usageLimits, where),
          database.select(usageLimits, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset, fresh: true }),
        ]);
        // List items omit `object` (SPEC.md, as for rate limits).
        const items = await Promise.all(
          rows.map(async (row) => {
            const { object: _, ...item } = await withUsage(row);
            return item;
          }),
        );
        return list(items, total);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/policies/usage-limits/:id',
      scope: 'usage_limits_policies.read',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const status = oneOf(req.query, 'status', STATUSES);
        const row = await find(req);
        if (status && row.status !== status) throw Errors.notFound(NOT_FOUND);
        return json(await withUsage(row));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/policies/usage-limits/:id',
      scope: 'usage_limits_policies.write',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const body = checkUpdate(req.body);
        const before = await find(req);
        const { fields, rules } = read(body, before);
        await database.update(
          usageLimits,
          { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.status !== undefined ? { status: body.status } : {}), ...fields, ...rules, last_updated_at: Date.now() },
          (c) => eq(c.id, before.id),
        );
        const after = await reread(before.id);
        await store.changed();
        req.audit = { resource: 'usage_limits_policy', resourceId: before.id, workspaceId: before.workspace_id, before: present(before), after: present(after) };
        return json(await withUsage(after));
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/policies/usage-limits/:id',
      scope: 'usage_limits_policies.delete',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const before = await find(req);
        await database.update(usageLimits, { status: 'archived', last_updated_at: Date.now() }, (c) => eq(c.id, before.id));
        await store.changed();
        req.audit = { resource: 'usage_limits_policy', resourceId: before.id, action: 'archive', workspaceId: before.workspace_id, before: present(before) };
        return noContent();
      },
    },
  ];
}
