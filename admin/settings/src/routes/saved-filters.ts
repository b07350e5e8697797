/**
 * /logs/saved-filters: named values of the common log filters (logs/saved-filters.ts has who may do what), applied
 * by `saved_filter_id` on GET /logs and on exports.
 */
import { visibleWorkspaces } from '@gateway/admin-identity';
import { iso, json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRoute, and, asc, type Database, eq, inArray, isNull, or, type Where } from '@gateway/sdk';
import { findWorkspace } from '@gateway/admin-identity';
import { Type } from '@sinclair/typebox';
import { checkFilterValues, findSavedFilter, requireWritable, type SavedFilterRow, savedFilterWorkspace } from '../logs/saved-filters.ts';
import { logSavedFilters } from '../tables.ts';

const Filters = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32 });
const checkCreate = validator(
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 255 }), workspace_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])), filters: Filters },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), filters: Type.Optional(Filters) }, { additionalProperties: false }),
);

export function presentSavedFilter(row: SavedFilterRow) {
  return {
    object: 'log_saved_filter',
    id: row.id,
    name: row.name,
    workspace_id: row.workspace_id,
    filters: row.filters,
    created_by_api_key_id: row.created_by_api_key_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function savedFilterRoutes({ database }: { database: Database }): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/logs/saved-filters',
      scope: 'logs.read',
      async handle(req) {
        const p = page(req.query);
        const named = req.query.get('workspace_id');
        const workspace = named ? (await findWorkspace(database, req.caller.organisationId, named, { param: 'workspace_id' })).id : undefined;
        const visible = await visibleWorkspaces(database, req.principal);
        const where: Where<(typeof logSavedFilters)['columns']> = (c) =>
          and(
            eq(c.organisation_id, req.caller.organisationId),
            workspace === undefined ? undefined : eq(c.workspace_id, workspace),
            visible === 'all' ? undefined : visible.length ? or(isNull(c.workspace_id), inArray(c.workspace_id, visible)) : isNull(c.workspace_id),
          );
        const [total, rows] = await Promise.all([
          database.count(logSavedFilters, where),
          database.select(logSavedFilters, { where, orderBy: (c) => [asc(c.name), asc(c.id)], limit: p.limit, offset: p.offset }),
        ]);
        return list(rows.map(presentSavedFilter), total);
      },
    },
    {
      method: 'POST',
      path: '/logs/saved-filters',
      scope: 'logs.write',
      async handle(req) {
        const body = checkCreate(req.body);
        const workspaceId = await savedFilterWorkspace(database, req.principal, body.workspace_id);
        const filters = await checkFilterValues(database, req.principal, body.filters);
        const now = Date.now();
        const row: SavedFilterRow = {
          id: crypto.randomUUID(),
          organisation_id: req.caller.organisationId,
          workspace_id: workspaceId,
          name: body.name,
          filters,
          created_by_api_key_id: req.caller.apiKeyId,
          created_at: now,
          updated_at: now,
        };
        await database.insert(logSavedFilters, row);
        req.audit = { resource: 'log_saved_filter', resourceId: row.id, action: 'create', workspaceId, after: presentSavedFilter(row) };
        return json(presentSavedFilter(row), 201);
      },
    },
    {
      method: 'GET',
      path: '/logs/saved-filters/:savedFilterId',
      scope: 'logs.read',
      handle: async (req) => json(presentSavedFilter(await findSavedFilter(database, req.principal, req.params.savedFilterId ?? ''))),
    },
    {
      method: 'PUT',
      path: '/logs/saved-filters/:savedFilterId',
      scope: 'logs.write',
      async handle(req) {
        const existing = await findSavedFilter(database, req.principal, req.params.savedFilterId ?? '');
        requireWritable(req.principal, existing);
        const body = checkUpdate(req.body);
        const next: SavedFilterRow = {
          ...existing,
          name: body.name ?? existing.name,
          filters: body.filters ? await checkFilterValues(database, req.principal, body.filters) : existing.filters,
          updated_at: Date.now(),
        };
        await database.update(logSavedFilters, { name: next.name, filters: next.filters, updated_at: next.updated_at }, (c) => eq(c.id, existing.id));
        req.audit = { resource: 'log_saved_filter', resourceId: existing.id, action: 'update', workspaceId: existing.workspace_id, before: presentSavedFilter(existing), after: presentSavedFilter(next) };
        return json(presentSavedFilter(next));
      },
    },
    {
      method: 'DELETE',
      path: '/logs/saved-filters/:savedFilterId',
      scope: 'logs.write',
      async handle(req) {
        const existing = await findSavedFilter(database, req.principal, req.params.savedFilterId ?? '');
        requireWritable(req.principal, existing);
        await database.delete(logSavedFilters, (c) => eq(c.id, existing.id));
        req.audit = { resource: 'log_saved_filter', resourceId: existing.id, action: 'delete', workspaceId: existing.workspace_id, before: presentSavedFilter(existing) };
        return noContent();
      },
    },
  ];
}
