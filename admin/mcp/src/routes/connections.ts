/**
 * /mcp-servers/:id/connections: users' own credentials for a server whose integration takes one per user (auth type
 * `user_token`), sealed at rest, never shown. A user connects and disconnects themselves; the workspace's admins and
 * managers (and organisation admins, and the workspace's service key) list and revoke anyone's. Connecting also
 * reads the server's metadata with the new credential, when no sync has succeeded yet.
 */
import { json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, desc, eq, Errors, roleAtLeast, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireReader } from '../access.ts';
import type { McpContext } from '../context.ts';
import { presentConnection, type ServerRow } from '../present.ts';
import { connectionSecretAt, mcpConnections, mcpIntegrations, mcpServers } from '../tables.ts';

const NOT_FOUND = 'No such MCP server';
const checkCreate = validator(Type.Object({ token: Type.String({ minLength: 1, maxLength: 8192 }) }, { additionalProperties: false }));
/** `redirect_uri`: the gateway's callback as the authorization server knows it, when MCP_OAUTH_REDIRECT_URL is not set. */
const checkAuthorize = validator(
  Type.Object({ redirect_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://[^\\s]+/v1/mcp/oauth/callback$' })) }, { additionalProperties: false }),
);
const checkDelete = validator(Type.Object({ user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: false }));

/** The origin the request reached the gateway at (Host, and X-Forwarded-Proto behind a proxy). */
function originOf(headers: Headers): string | undefined {
  const host = headers.get('x-forwarded-host') ?? headers.get('host');
  if (!host) return undefined;
  const proto = headers.get('x-forwarded-proto') === 'https' ? 'https' : 'http';
  return URL.canParse(`${proto}://${host}`) ? `${proto}://${host}` : undefined;
}

export function connectionRoutes(ctx: McpContext): AdminRoute[] {
  const { database } = ctx;

  async function serverOf(req: AdminRequest): Promise<ServerRow> {
    const ref = req.params.mcpServerId ?? '';
    const [row] = await database.select(mcpServers, { where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.id, ref)), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    await requireReader(req.principal, row.workspace_id, NOT_FOUND);
    return row;
  }

  /** Managers and admins of the server's workspace act on anyone's connection. */
  const managesAll = async (req: AdminRequest, server: ServerRow) => roleAtLeast(await req.principal.workspaceRole(server.workspace_id), 'manager');

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/mcp-servers/:mcpServerId/connections',
    scope: 'mcp_servers.read',
    async handle(req) {
      const server = await serverOf(req);
      const p = page(req.query);
      const all = await managesAll(req, server);
      const wanted = req.query.get('user_id');
      const userId = all ? wanted : req.caller.userId;
      if (!all && wanted && wanted !== userId) throw Errors.forbidden("Only the workspace's managers and admins see other users' connections");
      const where: Where<typeof mcpConnections.columns> = (c) => {
        const parts: (SQL | undefined)[] = [eq(c.mcp_server_id, server.id)];
        if (userId) parts.push(eq(c.user_id, userId));
        else if (!all) parts.push(eq(c.id, '')); // a service key without a user has no connection of its own
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(mcpConnections, where),
        database.select(mcpConnections, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentConnection), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/mcp-servers/:mcpServerId/connections',
    scope: ['mcp_servers.invoke', 'mcp_servers.write'],
    async handle(req) {
      const body = checkCreate(req.body);
      const server = await serverOf(req);
      const userId = req.caller.userId;
      if (!userId) throw Errors.forbidden('A connection is a user\'s own: make it with a workspace-user key');
      const [integration] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, server.mcp_integration_id), limit: 1, fresh: true });
      if (integration?.auth_type !== 'user_token') throw Errors.badRequest('This MCP server does not take per-user credentials (its integration\'s auth type is not user_token)', 'token');
      const now = Date.now();
      const [existing] = await database.select(mcpConnections, { where: (c) => and(eq(c.mcp_server_id, server.id), eq(c.user_id, userId)), limit: 1, fresh: true });
      const id = existing?.id ?? crypto.randomUUID();
      const secret = ctx.box().seal(body.token, connectionSecretAt(id));
      if (existing) await database.update(mcpConnections, { secret, updated_at: now }, (c) => eq(c.id, id));
      else
        await database.insert(mcpConnections, {
          id,
          organisation_id: server.organisation_id,
          workspace_id: server.workspace_id,
          mcp_server_id: server.id,
          user_id: userId,
          kind: 'token',
          secret,
          created_at: now,
          updated_at: now,
        });
      if (server.sync_status !== 'synced') await ctx.sync.syncServer(server.id, body.token);
      const [row] = await database.select(mcpConnections, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
      if (!row) throw Errors.internal('The connection vanished after it was written');
      const view = presentConnection(row);
      req.audit = { resource: 'mcp_connection', resourceId: id, action: existing ? 'update' : 'create', workspaceId: server.workspace_id, after: view };
      return json(view, existing ? 200 : 201);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/mcp-servers/:mcpServerId/connections',
    scope: ['mcp_servers.invoke', 'mcp_servers.write'],
    async handle(req) {
      const body = req.body === undefined ? {} : checkDelete(req.body);
      const server = await serverOf(req);
      const target = body.user_id ?? req.query.get('user_id') ?? req.caller.userId;
      if (!target) throw Errors.badRequest('Name the user whose connection to revoke: user_id', 'user_id');
      if (target !== req.caller.userId && !(await managesAll(req, server)))
        throw Errors.forbidden("Only the workspace's managers and admins revoke other users' connections");
      const [row] = await database.select(mcpConnections, { where: (c) => and(eq(c.mcp_server_id, server.id), eq(c.user_id, target)), limit: 1, fresh: true });
      if (!row) throw Errors.notFound('No such connection');
      await database.delete(mcpConnections, (c) => eq(c.id, row.id));
      req.audit = { resource: 'mcp_connection', resourceId: row.id, action: 'delete', workspaceId: server.workspace_id, before: presentConnection(row) };
      return noContent();
    },
  };

  const authorize: AdminRoute = {
    method: 'POST',
    path: '/mcp-servers/:mcpServerId/connections/authorize',
    scope: ['mcp_servers.invoke', 'mcp_servers.write'],
    audit: false,
    async handle(req) {
      const body = req.body === undefined ? {} : checkAuthorize(req.body);
      const server = await serverOf(req);
      const userId = req.caller.userId;
      if (!userId) throw Errors.forbidden('A connection is a user\'s own: make it with a workspace-user key');
      const [integration] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, server.mcp_integration_id), limit: 1, fresh: true });
      if (!integration) throw Errors.notFound('The MCP server has no integration');
      const origin = body.redirect_uri ?? originOf(req.headers);
      return json({ object: 'mcp_authorization', mcp_server_id: server.id, authorization_url: await ctx.oauth.authorize(integration, server, userId, origin) });
    },
  };

  /** The authorization server's redirect: state (one use, bound to the user who asked) and PKCE are the credentials. */
  const callback: AdminRoute = {
    public: true,
    method: 'GET',
    path: '/mcp/oauth/callback',
    async handle(req) {
      const error = req.query.get('error');
      if (error) throw Errors.badRequest(`The authorization server refused: ${error} ${req.query.get('error_description') ?? ''}`.trim(), 'error');
      const code = req.query.get('code');
      const state = req.query.get('state');
      if (!code || !state) throw Errors.badRequest('The callback needs code and state', code ? 'state' : 'code');
      const done = await ctx.oauth.complete(code, state, async (serverId) => {
        const [server] = await database.select(mcpServers, { where: (c) => eq(c.id, serverId), limit: 1, fresh: true });
        if (!server) return undefined;
        const [integration] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, server.mcp_integration_id), limit: 1, fresh: true });
        return integration;
      });
      // The first connection reads the metadata the integration alone cannot.
      const [server] = await database.select(mcpServers, { where: (c) => eq(c.id, done.serverId), limit: 1, fresh: true });
      if (server && server.sync_status !== 'synced') await ctx.sync.syncServer(server.id, done.accessToken);
      req.audit = { organisationId: done.organisationId, resource: 'mcp_connection', action: 'create', workspaceId: done.workspaceId, after: { mcp_server_id: done.serverId, user_id: done.userId, kind: 'oauth' } };
      return new Response('<!doctype html><title>Connected</title><p>The MCP server is connected. You may close this window.</p>', {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      });
    },
  };

  return [listRoute, create, remove, authorize, callback];
}
