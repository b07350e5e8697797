/**
 * /agent-servers/:id/connections: users' own credentials for a server whose integration takes one per user (auth type
 * `user_token`), sealed at rest, never shown. A user connects and disconnects themselves; the workspace's admins and
 * managers (and organisation admins, and the workspace's service key) list and revoke anyone's. As for MCP servers.
 */
import { json, list, noContent, page, validator } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, desc, eq, Errors, roleAtLeast, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireServerReader } from '../access.ts';
import type { AgentsContext } from '../context.ts';
import { INVOKE_SCOPE } from '../invoke.ts';
import { presentConnection, type ServerRow } from '../present.ts';
import { agentConnections, agentServers, connectionSecretAt } from '../tables.ts';
import { usableIntegration } from './servers.ts';

const NOT_FOUND = 'No such agent server';
const checkCreate = validator(Type.Object({ token: Type.String({ minLength: 1, maxLength: 8192 }) }, { additionalProperties: false }));
const checkDelete = validator(Type.Object({ user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: false }));

export function connectionRoutes(ctx: AgentsContext): AdminRoute[] {
  const { database } = ctx;

  async function serverOf(req: AdminRequest): Promise<ServerRow> {
    const ref = req.params.agentServerId ?? '';
    const [row] = await database.select(agentServers, { where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.id, ref)), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    await requireServerReader(req.principal, row.workspace_id, NOT_FOUND);
    return row;
  }

  /** Managers and admins of the server's workspace act on anyone's connection. */
  const managesAll = async (req: AdminRequest, server: ServerRow) => roleAtLeast(await req.principal.workspaceRole(server.workspace_id), 'manager');

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/agent-servers/:agentServerId/connections',
    scope: 'agent_servers.read',
    async handle(req) {
      const server = await serverOf(req);
      const p = page(req.query);
      const all = await managesAll(req, server);
      const wanted = req.query.get('user_id');
      const userId = all ? wanted : req.caller.userId;
      if (!all && wanted && wanted !== userId) throw Errors.forbidden("Only the workspace's managers and admins see other users' connections");
      const where: Where<typeof agentConnections.columns> = (c) => {
        const parts: (SQL | undefined)[] = [eq(c.agent_server_id, server.id)];
        if (userId) parts.push(eq(c.user_id, userId));
        else if (!all) parts.push(eq(c.id, '')); // a service key without a user has no connection of its own
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(agentConnections, where),
        database.select(agentConnections, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentConnection), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/agent-servers/:agentServerId/connections',
    scope: [INVOKE_SCOPE, 'agent_servers.write'],
    async handle(req) {
      const body = checkCreate(req.body);
      const server = await serverOf(req);
      const userId = req.caller.userId;
      if (!userId) throw Errors.forbidden("A connection is a user's own: make it with a workspace-user key");
      const integration = await usableIntegration(database, server.organisation_id, server.agent_integration_id, server.workspace_id);
      if (integration?.auth_type !== 'user_token') throw Errors.badRequest("This agent server does not take per-user credentials (its integration's auth type is not user_token)", 'token');
      const now = Date.now();
      const [existing] = await database.select(agentConnections, { where: (c) => and(eq(c.agent_server_id, server.id), eq(c.user_id, userId)), limit: 1, fresh: true });
      const id = existing?.id ?? crypto.randomUUID();
      const secret = ctx.box().seal(body.token, connectionSecretAt(id));
      if (existing) await database.update(agentConnections, { secret, updated_at: now }, (c) => eq(c.id, id));
      else
        await database.insert(agentConnections, {
          id,
          organisation_id: server.organisation_id,
          workspace_id: server.workspace_id,
          agent_server_id: server.id,
          user_id: userId,
          secret,
          created_at: now,
          updated_at: now,
        });
      const [row] = await database.select(agentConnections, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
      if (!row) throw Errors.internal('The connection vanished after it was written');
      const view = presentConnection(row);
      req.audit = { resource: 'agent_connection', resourceId: id, action: existing ? 'update' : 'create', workspaceId: server.workspace_id, after: view };
      return json(view, existing ? 200 : 201);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/agent-servers/:agentServerId/connections',
    scope: [INVOKE_SCOPE, 'agent_servers.write'],
    async handle(req) {
      const body = req.body === undefined ? {} : checkDelete(req.body);
      const server = await serverOf(req);
      const target = body.user_id ?? req.query.get('user_id') ?? req.caller.userId;
      if (!target) throw Errors.badRequest('Name the user whose connection to revoke: user_id', 'user_id');
      if (target !== req.caller.userId && !(await managesAll(req, server))) throw Errors.forbidden("Only the workspace's managers and admins revoke other users' connections");
      const [row] = await database.select(agentConnections, { where: (c) => and(eq(c.agent_server_id, server.id), eq(c.user_id, target)), limit: 1, fresh: true });
      if (!row) throw Errors.notFound('No such connection');
      await database.delete(agentConnections, (c) => eq(c.id, row.id));
      req.audit = { resource: 'agent_connection', resourceId: row.id, action: 'delete', workspaceId: server.workspace_id, before: presentConnection(row) };
      return noContent();
    },
  };

  return [listRoute, create, remove];
}
