/**
 * /mcp-servers: an MCP integration exposed to one workspace at /v1/mcp/<slug>, with the tools it may use, and what
 * its upstream says it is (synced on create, on `POST /mcp-servers/:id/sync`, and on the schedule of sync.ts).
 * Read by any role in the workspace; changed by its admins, and by its managers while `managersWriteMcpServers` is on.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkSlug, conflictOnUnique, json, list, noContent, page, validator, writeWithSlug } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, desc, eq, Errors, inArray, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireReader, requireWriter } from '../access.ts';
import { BY_FIELD, type McpContext } from '../context.ts';
import { presentMetadata, presentServer, type ServerRow } from '../present.ts';
import { mcpIntegrations, mcpServers } from '../tables.ts';

const NOT_FOUND = 'No such MCP server';

const ToolList = Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000, uniqueItems: true }), Type.Null()]);
const Description = Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]);

const checkCreate = validator(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      slug: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      description: Type.Optional(Description),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      mcp_integration_id: Type.String({ minLength: 1, maxLength: 255 }),
      allowed_tools: Type.Optional(ToolList),
      denied_tools: Type.Optional(ToolList),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      slug: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      description: Type.Optional(Description),
      allowed_tools: Type.Optional(ToolList),
      denied_tools: Type.Optional(ToolList),
    },
    { additionalProperties: false },
  ),
);

export function serverRoutes(ctx: McpContext): AdminRoute[] {
  const { database } = ctx;

  /** By id, or by slug in `workspace_id` of the query or the caller's workspace. */
  async function lookup(req: AdminRequest): Promise<ServerRow> {
    const org = req.caller.organisationId;
    const ref = req.params.mcpServerId ?? '';
    const [byId] = await database.select(mcpServers, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (byId) return byId;
    const hint = req.query.get('workspace_id');
    const workspaceId = hint ? (await findWorkspace(database, org, hint, BY_FIELD)).id : req.caller.workspaceId;
    const [bySlug] = await database.select(mcpServers, { where: (c) => and(eq(c.workspace_id, workspaceId), eq(c.slug, ref)), limit: 1, fresh: true });
    if (!bySlug) throw Errors.notFound(NOT_FOUND);
    return bySlug;
  }

  const readable = async (req: AdminRequest): Promise<ServerRow> => {
    const row = await lookup(req);
    await requireReader(req.principal, row.workspace_id, NOT_FOUND);
    return row;
  };
  const writable = async (req: AdminRequest): Promise<ServerRow> => {
    const row = await lookup(req);
    await requireWriter(req.principal, row.workspace_id, 'managersWriteMcpServers', ctx.security(), NOT_FOUND);
    return row;
  };
  const fresh = async (id: string): Promise<ServerRow> => {
    const [row] = await database.select(mcpServers, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };
  const taken = (slug: string) => Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this workspace`, 'slug');

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/mcp-servers',
    scope: 'mcp_servers.read',
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let visible: string[] | 'all';
      if (filter) {
        const only = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await requireReader(req.principal, only, 'No such workspace: workspace_id');
        visible = [only];
      } else visible = await visibleWorkspaces(database, req.principal);
      const where: Where<typeof mcpServers.columns> = (c) => {
        const parts: (SQL | undefined)[] = [eq(c.organisation_id, org)];
        if (visible !== 'all') parts.push(visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(mcpServers, where),
        database.select(mcpServers, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentServer), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/mcp-servers',
    scope: 'mcp_servers.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await requireWriter(req.principal, workspace.id, 'managersWriteMcpServers', ctx.security(), 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      const [integration] = await database.select(mcpIntegrations, {
        where: (c) => and(eq(c.organisation_id, org), eq(c.id, body.mcp_integration_id)),
        limit: 1,
        fresh: true,
      });
      // An integration of another workspace is as good as absent.
      if (!integration || (integration.workspace_id !== null && integration.workspace_id !== workspaceId))
        throw Errors.notFound('No such MCP integration: mcp_integration_id');
      const id = crypto.randomUUID();
      const now = Date.now();
      const given = body.slug === undefined ? undefined : checkSlug(body.slug);
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.insert(mcpServers, {
            id,
            organisation_id: org,
            workspace_id: workspaceId,
            mcp_integration_id: integration.id,
            name: body.name,
            slug,
            description: body.description ?? null,
            allowed_tools: body.allowed_tools ?? null,
            denied_tools: body.denied_tools ?? null,
            metadata: null,
            sync_status: 'pending',
            sync_error: null,
            synced_at: null,
            version: 1,
            created_at: now,
            updated_at: now,
          }),
        taken,
      );
      // Read the upstream now: the answer shows what it is (or why it could not be read).
      await ctx.sync.syncServer(id);
      const view = presentServer(await fresh(id));
      req.audit = { resource: 'mcp_server', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/mcp-servers/:mcpServerId',
    scope: 'mcp_servers.read',
    async handle(req) {
      return json(presentServer(await readable(req)));
    },
  };

  const metadata: AdminRoute = {
    method: 'GET',
    path: '/mcp-servers/:mcpServerId/metadata',
    scope: 'mcp_servers.read',
    async handle(req) {
      return json(presentMetadata(await readable(req)));
    },
  };

  const sync: AdminRoute = {
    method: 'POST',
    path: '/mcp-servers/:mcpServerId/sync',
    scope: 'mcp_servers.write',
    async handle(req) {
      const row = await writable(req);
      await ctx.sync.syncServer(row.id);
      const view = presentServer(await fresh(row.id));
      req.audit = { resource: 'mcp_server', resourceId: row.id, action: 'sync', workspaceId: row.workspace_id };
      return json(view);
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/mcp-servers/:mcpServerId',
    scope: 'mcp_servers.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await writable(req);
      const slug = body.slug === undefined ? row.slug : checkSlug(body.slug);
      const changed = await conflictOnUnique(
        () =>
          database.update(
            mcpServers,
            {
              name: body.name ?? row.name,
              slug,
              description: body.description === undefined ? row.description : body.description,
              allowed_tools: body.allowed_tools === undefined ? row.allowed_tools : body.allowed_tools,
              denied_tools: body.denied_tools === undefined ? row.denied_tools : body.denied_tools,
              version: row.version + 1,
              updated_at: Date.now(),
            },
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          ),
        () => taken(slug),
      );
      if (changed === 0) throw Errors.conflict('The MCP server was changed by another request meanwhile; read it again and retry');
      const view = presentServer(await fresh(row.id));
      req.audit = { resource: 'mcp_server', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentServer(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/mcp-servers/:mcpServerId',
    scope: 'mcp_servers.delete',
    async handle(req) {
      const row = await writable(req);
      await database.delete(mcpServers, (c) => eq(c.id, row.id));
      req.audit = { resource: 'mcp_server', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentServer(row) };
      return noContent();
    },
  };

  return [listRoute, create, get, metadata, sync, update, remove];
}
