/**
 * /policies/rate-limits (docs/admin/policies.md). Organisation owners and admins (and organisation-service keys)
 * manage the organisation's policies; a DELETE archives (kept, shown with status `archived`, no longer enforced).
 * Every change reloads the policies here and in every other process before the answer.
 */
import { findWorkspace, lookupWorkspace, requireActive } from '@gateway/admin-identity';
import { invalidBody, iso, json, list, noContent, page, requireOrgAdmin, validator } from '@gateway/admin-kit';
import { conditionViolations, groupByViolations, LIMIT_UNITS, type PolicyCondition, type PolicyGroupBy } from '@gateway/policy-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, desc, eq, Errors, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import type { PolicyRow, PolicyStore } from './store.ts';
import { rateLimitPolicies } from './table.ts';

export const SCOPES = ['rate_limits_policies.read', 'rate_limits_policies.write', 'rate_limits_policies.delete'] as const;

/** A policy's types: `tool_calls` counts tool and agent calls through the MCP and A2A proxies. */
export const TYPES = ['requests', 'tokens', 'tool_calls'] as const;
/** The types of the `rate_limits` of API keys, virtual keys and integration workspaces (model calls only). */
export const SUBJECT_TYPES = ['requests', 'tokens'] as const;
/** The highest `value` of a limit. */
export const MAX_VALUE = 2_000_000_000;
const STATUSES = ['active', 'archived'] as const;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Value = Type.Integer({ minimum: 1, maximum: MAX_VALUE });
const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      type: Type.Union(TYPES.map((t) => Type.Literal(t))),
      unit: Type.Union(LIMIT_UNITS.map((u) => Type.Literal(u))),
      value: Value,
      conditions: Type.Optional(Type.Unknown()),
      group_by: Type.Optional(Type.Unknown()),
      workspace_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Name),
      value: Type.Optional(Value),
      conditions: Type.Optional(Type.Unknown()),
      group_by: Type.Optional(Type.Unknown()),
      status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))),
    },
    { additionalProperties: false },
  ),
);

/** Conditions and group_by checked by the shared rules; 400 listing every violation. */
function checked(conditions: unknown, groupBy: unknown): { conditions?: PolicyCondition[]; group_by?: PolicyGroupBy[] } {
  const violations = [...(conditions === undefined ? [] : conditionViolations(conditions)), ...(groupBy === undefined ? [] : groupByViolations(groupBy))];
  if (violations.length) throw invalidBody(violations, violations[0]!.split(/[:[.]/)[0] ?? null);
  const out: { conditions?: PolicyCondition[]; group_by?: PolicyGroupBy[] } = {};
  // Stored as {key, value} / {key} only, in the order given.
  if (conditions !== undefined) out.conditions = (conditions as PolicyCondition[]).map(({ key, value }) => ({ key, value }));
  if (groupBy !== undefined) out.group_by = (groupBy as PolicyGroupBy[]).map(({ key }) => ({ key }));
  return out;
}

/** A query filter that must be one of `allowed`, or absent; 400 naming it otherwise. */
function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw Errors.badRequest(`${name} must be one of ${allowed.join(', ')}`, name);
  return v as T;
}

export function present(row: PolicyRow) {
  return {
    id: row.id,
    object: 'policy_rate_limits' as const,
    name: row.name,
    type: row.type,
    unit: row.unit,
    value: row.value,
    status: row.status,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    conditions: row.conditions,
    group_by: row.group_by,
    created_at: iso(row.created_at),
    last_updated_at: iso(row.last_updated_at),
  };
}

const NOT_FOUND = 'No such rate limits policy';

export function rateLimitRoutes(database: Database, store: PolicyStore): AdminRoute[] {
  const common = { feature: 'policy' } as const;

  async function find(req: AdminRequest): Promise<PolicyRow> {
    const id = req.params.id ?? '';
    const [row] = await database.select(rateLimitPolicies, {
      where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.id, id)),
      limit: 1,
      fresh: true,
    });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  }

  const reread = async (id: string): Promise<PolicyRow> => {
    const [row] = await database.select(rateLimitPolicies, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  return [
    {
      ...common,
      method: 'POST',
      path: '/policies/rate-limits',
      scope: 'rate_limits_policies.write',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const body = checkCreate(req.body);
        const { conditions = [], group_by = [] } = checked(body.conditions ?? [], body.group_by ?? []);
        const org = req.caller.organisationId;
        const workspaceId = body.workspace_id ? requireActive(await findWorkspace(database, org, body.workspace_id, { fresh: true, param: 'workspace_id' })) : null;
        const now = Date.now();
        const id = crypto.randomUUID();
        await database.insert(rateLimitPolicies, {
          id,
          organisation_id: org,
          workspace_id: workspaceId,
          name: body.name,
          type: body.type,
          unit: body.unit,
          value: body.value,
          conditions,
          group_by,
          status: 'active',
          created_at: now,
          last_updated_at: now,
        });
        const created = await reread(id);
        await store.changed();
        req.audit = { resource: 'rate_limits_policy', resourceId: created.id, workspaceId, after: present(created) };
        return json(present(created), 201);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/policies/rate-limits',
      scope: 'rate_limits_policies.read',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const p = page(req.query);
        const org = req.caller.organisationId;
        const status = oneOf(req.query, 'status', STATUSES);
        const type = oneOf(req.query, 'type', TYPES);
        const unit = oneOf(req.query, 'unit', LIMIT_UNITS);
        const ws = req.query.get('workspace_id');
        // An unknown workspace lists nothing (as another organisation's would).
        const workspaceId = ws ? ((await lookupWorkspace(database, org, ws))?.id ?? '') : undefined;
        const where: Where<typeof rateLimitPolicies.columns> = (c) => {
          const parts: SQL[] = [eq(c.organisation_id, org)];
          if (status) parts.push(eq(c.status, status));
          if (type) parts.push(eq(c.type, type));
          if (unit) parts.push(eq(c.unit, unit));
          if (workspaceId !== undefined) parts.push(eq(c.workspace_id, workspaceId));
          return and(...parts);
        };
        const [total, rows] = await Promise.all([
          database.count(rateLimitPolicies, where),
          database.select(rateLimitPolicies, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
        ]);
        // List items omit `object` (SPEC.md).
        return list(rows.map((row) => {
          const { object: _, ...item } = present(row);
          return item;
        }), total);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/policies/rate-limits/:id',
      scope: 'rate_limits_policies.read',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const status = oneOf(req.query, 'status', STATUSES);
        const row = await find(req);
        if (status && row.status !== status) throw Errors.notFound(NOT_FOUND);
        return json(present(row));
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/policies/rate-limits/:id',
      scope: 'rate_limits_policies.write',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const body = checkUpdate(req.body);
        const before = await find(req);
        const rules = checked(body.conditions, body.group_by);
        await database.update(
          rateLimitPolicies,
          {
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.value !== undefined ? { value: body.value } : {}),
            ...(body.status !== undefined ? { status: body.status } : {}),
            ...rules,
            last_updated_at: Date.now(),
          },
          (c) => eq(c.id, before.id),
        );
        const after = await reread(before.id);
        await store.changed();
        req.audit = { resource: 'rate_limits_policy', resourceId: before.id, workspaceId: before.workspace_id, before: present(before), after: present(after) };
        return json(present(after));
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/policies/rate-limits/:id',
      scope: 'rate_limits_policies.delete',
      async handle(req) {
        requireOrgAdmin(req.principal);
        const before = await find(req);
        await database.update(rateLimitPolicies, { status: 'archived', last_updated_at: Date.now() }, (c) => eq(c.id, before.id));
        await store.changed();
        req.audit = { resource: 'rate_limits_policy', resourceId: before.id, action: 'archive', workspaceId: before.workspace_id, before: present(before) };
        return noContent();
      },
    },
  ];
}
