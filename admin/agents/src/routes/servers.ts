/**
 * /agent-servers: an agent integration exposed to one workspace, invoked at /v1/agent-servers/<id>/a2a (invoke.ts);
 * the skills it exposes, the users who may invoke it, and its upstream agent card. Read by any role in the
 * workspace; changed by its managers and admins. A server may use its workspace's own integrations and the
 * organisation-level ones open to the workspace (PUT /agent-integrations/:id/workspaces).
 */
import { findUser, findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkSlug, conflictOnUnique, json, list, noContent, page, validator, writeWithSlug } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, type Database, desc, eq, Errors, inArray, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { requireServerReader, requireServerWriter } from '../access.ts';
import { type AgentsContext, BY_FIELD } from '../context.ts';
import { type IntegrationRow, presentServer, type ServerRow } from '../present.ts';
import { credentialHeaders, userCredential } from '../credentials.ts';
import { agentConnections, agentIntegrations, agentIntegrationWorkspaces, agentServerSkills, agentServers, agentServerUserAccess } from '../tables.ts';
import { replaceChildren } from '../replace-children.ts';
import { fetchAgentCard } from '../upstream.ts';
import { Description, Id, Name, Slug } from '../validation.ts';

const NOT_FOUND = 'No such agent server';

const checkCreate = validator(
  Type.Object(
    { name: Name, slug: Type.Optional(Slug), description: Type.Optional(Description), workspace_id: Type.Optional(Id), agent_integration_id: Id },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(Type.Object({ name: Type.Optional(Name), slug: Type.Optional(Slug), description: Type.Optional(Description) }, { additionalProperties: false }));
const checkSkills = validator(
  Type.Object({ skill_ids: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 500, uniqueItems: true }) }, { additionalProperties: false }),
);
const checkUsers = validator(Type.Object({ user_ids: Type.Array(Id, { maxItems: 1000, uniqueItems: true }) }, { additionalProperties: false }));

/** The integration a server of `workspaceId` may use: its workspace's own, or an organisation-level one open to it. */
export async function usableIntegration(database: Database, org: string, integrationId: string, workspaceId: string): Promise<IntegrationRow | undefined> {
  const [row] = await database.select(agentIntegrations, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, integrationId)), limit: 1, fresh: true });
  if (!row) return undefined;
  if (row.workspace_id !== null) return row.workspace_id === workspaceId ? row : undefined;
  const open = await database.count(agentIntegrationWorkspaces, (c) => and(eq(c.agent_integration_id, row.id), eq(c.workspace_id, workspaceId)));
  return open > 0 ? row : undefined;
}

export const serverSkillIds = async (database: Database, serverId: string) =>
  (await database.select(agentServerSkills, { where: (c) => eq(c.agent_server_id, serverId), orderBy: (c) => [asc(c.skill_id)], fresh: true })).map((r) => r.skill_id);

export const serverUserIds = async (database: Database, serverId: string) =>
  (await database.select(agentServerUserAccess, { where: (c) => eq(c.agent_server_id, serverId), orderBy: (c) => [asc(c.user_id)], fresh: true })).map((r) => r.user_id);

export function serverRoutes(ctx: AgentsContext): AdminRoute[] {
  const { database } = ctx;
  const taken = (slug: string) => Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken in this workspace`, 'slug');

  /** By id, or by slug in the caller's workspace. */
  async function lookup(req: AdminRequest): Promise<ServerRow> {
    const org = req.caller.organisationId;
    const ref = req.params.agentServerId ?? '';
    const [byId] = await database.select(agentServers, { where: (c) => and(eq(c.organisation_id, org), eq(c.id, ref)), limit: 1, fresh: true });
    if (byId) return byId;
    const [bySlug] = await database.select(agentServers, { where: (c) => and(eq(c.workspace_id, req.caller.workspaceId), eq(c.slug, ref)), limit: 1, fresh: true });
    if (!bySlug) throw Errors.notFound(NOT_FOUND);
    return bySlug;
  }
  const readable = async (req: AdminRequest) => {
    const row = await lookup(req);
    await requireServerReader(req.principal, row.workspace_id, NOT_FOUND);
    return row;
  };
  const writable = async (req: AdminRequest) => {
    const row = await lookup(req);
    await requireServerWriter(req.principal, row.workspace_id, NOT_FOUND);
    return row;
  };
  const fresh = async (id: string): Promise<ServerRow> => {
    const [row] = await database.select(agentServers, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/agent-servers',
    scope: 'agent_servers.read',
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let visible: string[] | 'all';
      if (filter) {
        const only = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await requireServerReader(req.principal, only, 'No such workspace: workspace_id');
        visible = [only];
      } else visible = await visibleWorkspaces(database, req.principal);
      const where: Where<typeof agentServers.columns> = (c) =>
        and(eq(c.organisation_id, org), visible === 'all' ? undefined : visible.length > 0 ? inArray(c.workspace_id, visible) : eq(c.id, ''));
      const [total, rows] = await Promise.all([
        database.count(agentServers, where),
        database.select(agentServers, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentServer), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/agent-servers',
    scope: 'agent_servers.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
      await requireServerWriter(req.principal, workspace.id, 'No such workspace: workspace_id');
      const workspaceId = requireActive(workspace);
      const integration = await usableIntegration(database, org, body.agent_integration_id, workspaceId);
      if (!integration) throw Errors.notFound('No such agent integration open to this workspace: agent_integration_id');
      const id = crypto.randomUUID();
      const now = Date.now();
      await writeWithSlug(
        body.slug === undefined ? undefined : checkSlug(body.slug),
        body.name,
        (slug) =>
          database.insert(agentServers, {
            id,
            organisation_id: org,
            workspace_id: workspaceId,
            agent_integration_id: integration.id,
            name: body.name,
            slug,
            description: body.description ?? null,
            version: 1,
            created_at: now,
            updated_at: now,
          }),
        taken,
      );
      // The first card read (bounded by AGENT_CARD_SYNC_TIMEOUT_MS); a failure is recorded on the server, not answered.
      await ctx.cardSync.syncServer(id);
      const view = presentServer(await fresh(id));
      req.audit = { resource: 'agent_server', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/agent-servers/:agentServerId',
    scope: 'agent_servers.read',
    async handle(req) {
      return json(presentServer(await readable(req)));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/agent-servers/:agentServerId',
    scope: 'agent_servers.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await writable(req);
      const slug = body.slug === undefined ? row.slug : checkSlug(body.slug);
      const changed = await conflictOnUnique(
        () =>
          database.update(
            agentServers,
            {
              name: body.name ?? row.name,
              slug,
              description: body.description === undefined ? row.description : body.description,
              version: row.version + 1,
              updated_at: Date.now(),
            },
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          ),
        () => taken(slug),
      );
      if (changed === 0) throw Errors.conflict('The agent server was changed by another request meanwhile; read it again and retry');
      const view = presentServer(await fresh(row.id));
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentServer(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/agent-servers/:agentServerId',
    scope: 'agent_servers.delete',
    async handle(req) {
      const row = await writable(req);
      await database.transaction(async (tx) => {
        await tx.delete(agentServerSkills, (c) => eq(c.agent_server_id, row.id));
        await tx.delete(agentServerUserAccess, (c) => eq(c.agent_server_id, row.id));
        await tx.delete(agentConnections, (c) => eq(c.agent_server_id, row.id));
        await tx.delete(agentServers, (c) => eq(c.id, row.id));
      });
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentServer(row) };
      return noContent();
    },
  };

  const getSkills: AdminRoute = {
    method: 'GET',
    path: '/agent-servers/:agentServerId/skills',
    scope: 'agent_server_skills.read',
    async handle(req) {
      const row = await readable(req);
      return json({ object: 'agent_server_skills', agent_server_id: row.id, skill_ids: await serverSkillIds(database, row.id) });
    },
  };

  const putSkills: AdminRoute = {
    method: 'PUT',
    path: '/agent-servers/:agentServerId/skills',
    scope: 'agent_server_skills.write',
    async handle(req) {
      const body = checkSkills(req.body);
      const row = await writable(req);
      const before = await serverSkillIds(database, row.id);
      const current = await database.select(agentServerSkills, { where: (c) => eq(c.agent_server_id, row.id), fresh: true });
      await replaceChildren(
        database,
        current,
        body.skill_ids,
        (r, w) => r.skill_id === w,
        (tx, gone) => tx.delete(agentServerSkills, (c) => inArray(c.id, gone)),
        (tx, skill) => tx.insert(agentServerSkills, { id: crypto.randomUUID(), organisation_id: row.organisation_id, agent_server_id: row.id, skill_id: skill, created_at: Date.now() }),
      );
      const after = await serverSkillIds(database, row.id);
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'update_skills', workspaceId: row.workspace_id, before: { skill_ids: before }, after: { skill_ids: after } };
      return json({ object: 'agent_server_skills', agent_server_id: row.id, skill_ids: after });
    },
  };

  const getUsers: AdminRoute = {
    method: 'GET',
    path: '/agent-servers/:agentServerId/user-access',
    scope: 'agent_server_user_access.read',
    async handle(req) {
      const row = await readable(req);
      return json({ object: 'agent_server_user_access', agent_server_id: row.id, user_ids: await serverUserIds(database, row.id) });
    },
  };

  const putUsers: AdminRoute = {
    method: 'PUT',
    path: '/agent-servers/:agentServerId/user-access',
    scope: 'agent_server_user_access.write',
    async handle(req) {
      const body = checkUsers(req.body);
      const row = await writable(req);
      const users = await Promise.all(body.user_ids.map((u) => findUser(database, row.organisation_id, u, { fresh: true })));
      const before = await serverUserIds(database, row.id);
      const current = await database.select(agentServerUserAccess, { where: (c) => eq(c.agent_server_id, row.id), fresh: true });
      await replaceChildren(
        database,
        current,
        users.map((u) => u.id),
        (r, w) => r.user_id === w,
        (tx, gone) => tx.delete(agentServerUserAccess, (c) => inArray(c.id, gone)),
        (tx, userId) => tx.insert(agentServerUserAccess, { id: crypto.randomUUID(), organisation_id: row.organisation_id, agent_server_id: row.id, user_id: userId, created_at: Date.now() }),
      );
      const after = await serverUserIds(database, row.id);
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'update_user_access', workspaceId: row.workspace_id, before: { user_ids: before }, after: { user_ids: after } };
      return json({ object: 'agent_server_user_access', agent_server_id: row.id, user_ids: after });
    },
  };

  const removeSkill: AdminRoute = {
    method: 'DELETE',
    path: '/agent-servers/:agentServerId/skills/:skillId',
    scope: 'agent_server_skills.delete',
    async handle(req) {
      const row = await writable(req);
      const skill = req.params.skillId ?? '';
      const removed = await database.delete(agentServerSkills, (c) => and(eq(c.agent_server_id, row.id), eq(c.skill_id, skill)));
      if (removed === 0) throw Errors.notFound('The agent server does not name this skill');
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'delete_skill', workspaceId: row.workspace_id, before: { skill_id: skill } };
      return noContent();
    },
  };

  const removeUser: AdminRoute = {
    method: 'DELETE',
    path: '/agent-servers/:agentServerId/user-access/:userId',
    scope: 'agent_server_user_access.delete',
    async handle(req) {
      const row = await writable(req);
      const user = req.params.userId ?? '';
      const removed = await database.delete(agentServerUserAccess, (c) => and(eq(c.agent_server_id, row.id), eq(c.user_id, user)));
      if (removed === 0) throw Errors.notFound('The user is not on the agent server\'s user-access list');
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'delete_user_access', workspaceId: row.workspace_id, before: { user_id: user } };
      return noContent();
    },
  };

  const card: AdminRoute = {
    method: 'GET',
    path: '/agent-servers/:agentServerId/agent-card',
    scope: 'agent_servers.read',
    async handle(req) {
      const row = await readable(req);
      const integration = await usableIntegration(database, row.organisation_id, row.agent_integration_id, row.workspace_id);
      if (!integration) throw Errors.notFound('The agent server\'s integration is gone or no longer open to its workspace');
      // A per-user integration's card is read with the caller's own credential when they have connected.
      const userValue = integration.auth_type === 'user_token' && req.caller.userId ? await userCredential(database, ctx.box, row, req.caller.userId) : undefined;
      const credentials = await credentialHeaders(integration, row.workspace_id, ctx, userValue);
      const { card: upstream, url } = await fetchAgentCard(ctx.guard, integration, credentials, req.signal);
      const allowed = await serverSkillIds(database, row.id);
      // The card as the upstream gives it; its skills narrowed to the server's when the server names some.
      const skills = Array.isArray(upstream.skills) && allowed.length > 0 ? upstream.skills.filter((s) => s !== null && typeof s === 'object' && allowed.includes(String((s as { id?: unknown }).id))) : upstream.skills;
      const body = skills === undefined ? upstream : { ...upstream, skills };
      return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json', 'x-gateway-agent-card-source': url } });
    },
  };

  const sync: AdminRoute = {
    method: 'POST',
    path: '/agent-servers/:agentServerId/sync',
    scope: 'agent_servers.write',
    async handle(req) {
      const row = await writable(req);
      await ctx.cardSync.syncServer(row.id);
      const view = presentServer(await fresh(row.id));
      req.audit = { resource: 'agent_server', resourceId: row.id, action: 'sync', workspaceId: row.workspace_id };
      return json(view);
    },
  };

  return [listRoute, create, get, update, remove, getSkills, putSkills, removeSkill, getUsers, putUsers, removeUser, card, sync];
}
