/**
 * /agent-integrations: where an upstream A2A agent is and how the gateway authenticates to it, for one workspace or
 * the whole organisation (access.ts says who may do what); the workspaces an organisation-level one is open to; and
 * the skills recorded for it. The header value is sealed at rest and shown masked; a masked value sent back keeps the
 * stored one unless the URL changes (a stored secret only goes where it was entered for). `secret_mappings` are
 * checked against the secret-references plugin when saved and resolved per call; a new URL revokes users' own
 * credentials (their connections), and any change has the servers using the integration read its card again.
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkHeaderMappings, checkSlug, conflictOnUnique, json, list, noContent, page, type SecretMapping, validator, writeWithSlug } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, ALL_SCOPES, and, asc, desc, eq, Errors, inArray, isNotNull, isNull, or, type SQL, type Where } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { integrationScopes, requireIntegrationAccess } from '../access.ts';
import { type AgentsContext, BY_FIELD } from '../context.ts';
import { type IntegrationRow, presentIntegration } from '../present.ts';
import { agentConnections, agentIntegrationSkills, agentIntegrations, agentIntegrationWorkspaces, agentServers, authSecretAt, ORGANISATION_SCOPE } from '../tables.ts';
import { replaceChildren } from '../replace-children.ts';
import { Auth, checkHttpUrl, Description, Id, Mappings, Name, Slug, Url } from '../validation.ts';

const NOT_FOUND = 'No such agent integration';
const MASK = '****';

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Slug),
      description: Type.Optional(Description),
      workspace_id: Type.Optional(Id),
      url: Url,
      agent_card_url: Type.Optional(Type.Union([Url, Type.Null()])),
      auth: Type.Optional(Auth),
      secret_mappings: Type.Optional(Mappings),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Name),
      slug: Type.Optional(Slug),
      description: Type.Optional(Description),
      url: Type.Optional(Url),
      agent_card_url: Type.Optional(Type.Union([Url, Type.Null()])),
      auth: Type.Optional(Auth),
      secret_mappings: Type.Optional(Mappings),
    },
    { additionalProperties: false },
  ),
);
const checkWorkspaces = validator(Type.Object({ workspace_ids: Type.Array(Id, { maxItems: 1000, uniqueItems: true }) }, { additionalProperties: false }));
const checkSkills = validator(
  Type.Object(
    {
      skills: Type.Array(
        Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), name: Name, description: Type.Optional(Description) }, { additionalProperties: false }),
        { maxItems: 500 },
      ),
    },
    { additionalProperties: false },
  ),
);

export function integrationRoutes(ctx: AgentsContext): AdminRoute[] {
  const { database } = ctx;
  const taken = (slug: string) => Errors.conflict(`The slug ${JSON.stringify(slug)} is already taken`, 'slug');

  async function lookup(req: AdminRequest): Promise<IntegrationRow> {
    const org = req.caller.organisationId;
    const ref = req.params.agentIntegrationId ?? '';
    const rows = await database.select(agentIntegrations, { where: (c) => and(eq(c.organisation_id, org), or(eq(c.id, ref), eq(c.slug, ref))), fresh: true });
    const row = rows.find((r) => r.id === ref) ?? rows.find((r) => r.workspace_id === req.caller.workspaceId) ?? rows.find((r) => r.workspace_id === null);
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  }
  const fresh = async (id: string): Promise<IntegrationRow> => {
    const [row] = await database.select(agentIntegrations, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  };

  /** The URLs are refused now when they name a private address (checked again at every connection). */
  async function checkDestination(url: string | null | undefined, param: string): Promise<void> {
    if (url === null || url === undefined) return;
    checkHttpUrl(url, param);
    await ctx.guard.check(url);
  }

  async function checkMappings(org: string, workspaceId: string | null, mappings: readonly SecretMapping[] | undefined): Promise<void> {
    if (!mappings || mappings.length === 0) return;
    checkHeaderMappings(mappings);
    const resolver = ctx.secrets();
    if (!resolver) throw Errors.badRequest('secret_mappings need the secret-references plugin, which is not loaded', 'secret_mappings');
    await resolver.check(org, workspaceId === null ? 'all' : [workspaceId], mappings);
  }

  /** The servers using the integration: their users' own credentials revoked (`revoke`), their cards read again (not awaited). */
  async function afterChange(integrationId: string, revoke: boolean): Promise<void> {
    const servers = await database.select(agentServers, { where: (c) => eq(c.agent_integration_id, integrationId), fresh: true });
    if (servers.length === 0) return;
    if (revoke) await database.delete(agentConnections, (c) => inArray(c.agent_server_id, servers.map((s) => s.id)));
    for (const server of servers) void ctx.cardSync.syncServer(server.id);
  }

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/agent-integrations',
    scope: integrationScopes('read'),
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const scopes = req.caller.scopes;
      const has = (s: string) => scopes.includes(ALL_SCOPES) || scopes.includes(s);
      const orgLevel = has('organisation_agent_integrations.read');
      const wsLevel = has('workspace_agent_integrations.read');
      const filter = req.query.get('workspace_id');
      let visible: string[] | 'all' = [];
      if (wsLevel) {
        if (filter) {
          const only = (await findWorkspace(database, org, filter, BY_FIELD)).id;
          await requireIntegrationAccess(req, only, 'read', 'No such workspace: workspace_id');
          visible = [only];
        } else visible = await visibleWorkspaces(database, req.principal);
      }
      const where: Where<typeof agentIntegrations.columns> = (c) => {
        const levels: SQL[] = [];
        if (orgLevel && !filter) levels.push(isNull(c.workspace_id));
        if (visible === 'all') levels.push(isNotNull(c.workspace_id));
        else if (visible.length > 0) levels.push(inArray(c.workspace_id, visible));
        return and(eq(c.organisation_id, org), levels.length > 0 ? or(...levels) : eq(c.id, ''));
      };
      const [total, rows] = await Promise.all([
        database.count(agentIntegrations, where),
        database.select(agentIntegrations, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentIntegration), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/agent-integrations',
    scope: integrationScopes('write'),
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      let workspaceId: string | null = null;
      if (body.workspace_id !== undefined) {
        const workspace = await findWorkspace(database, org, body.workspace_id, BY_FIELD);
        await requireIntegrationAccess(req, workspace.id, 'write', 'No such workspace: workspace_id');
        workspaceId = requireActive(workspace);
      } else await requireIntegrationAccess(req, null, 'write', NOT_FOUND);
      checkHttpUrl(body.url, 'url');
      await checkDestination(body.url, 'url');
      await checkDestination(body.agent_card_url, 'agent_card_url');
      await checkMappings(org, workspaceId, body.secret_mappings);
      const id = crypto.randomUUID();
      const now = Date.now();
      const auth = body.auth ?? { type: 'none' as const };
      const given = body.slug === undefined ? undefined : checkSlug(body.slug);
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.insert(agentIntegrations, {
            id,
            organisation_id: org,
            workspace_id: workspaceId,
            scope: workspaceId ?? ORGANISATION_SCOPE,
            name: body.name,
            slug,
            description: body.description ?? null,
            url: body.url,
            agent_card_url: body.agent_card_url ?? null,
            auth_type: auth.type,
            auth_header: auth.type === 'none' ? null : auth.header_name,
            auth_secret: auth.type === 'header' ? ctx.box().seal(auth.header_value, authSecretAt(id)) : null,
            secret_mappings: body.secret_mappings ?? null,
            version: 1,
            created_at: now,
            updated_at: now,
          }),
        taken,
      );
      const view = presentIntegration(await fresh(id));
      req.audit = { resource: 'agent_integration', resourceId: id, action: 'create', workspaceId: workspaceId ?? undefined, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/agent-integrations/:agentIntegrationId',
    scope: integrationScopes('read'),
    async handle(req) {
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'read', NOT_FOUND);
      return json(presentIntegration(row));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/agent-integrations/:agentIntegrationId',
    scope: integrationScopes('write'),
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'write', NOT_FOUND);
      const url = body.url ?? row.url;
      if (body.url !== undefined) await checkDestination(body.url, 'url');
      if (body.agent_card_url) await checkDestination(body.agent_card_url, 'agent_card_url');
      if (body.secret_mappings !== undefined) await checkMappings(row.organisation_id, row.workspace_id, body.secret_mappings);
      const moved = url !== row.url || (body.agent_card_url !== undefined && body.agent_card_url !== row.agent_card_url);
      let authType = row.auth_type;
      let authHeader = row.auth_header;
      let authSecret = row.auth_secret;
      if (body.auth?.type === 'none') [authType, authHeader, authSecret] = ['none', null, null];
      else if (body.auth?.type === 'user_token') [authType, authHeader, authSecret] = ['user_token', body.auth.header_name, null];
      else if (body.auth?.type === 'header') {
        const keep = body.auth.header_value === MASK;
        if (keep && (moved || row.auth_type !== 'header'))
          throw Errors.badRequest('auth.header_value must be given again when the URL changes (a stored secret only goes where it was entered for)', 'auth.header_value');
        [authType, authHeader] = ['header', body.auth.header_name];
        if (!keep) authSecret = ctx.box().seal(body.auth.header_value, authSecretAt(row.id));
      } else if (moved && row.auth_type === 'header')
        throw Errors.badRequest('auth must be given again when the URL changes (a stored secret only goes where it was entered for)', 'auth');
      const slug = body.slug === undefined ? row.slug : checkSlug(body.slug);
      const changed = await conflictOnUnique(
        () =>
          database.update(
            agentIntegrations,
            {
              name: body.name ?? row.name,
              slug,
              description: body.description === undefined ? row.description : body.description,
              url,
              agent_card_url: body.agent_card_url === undefined ? row.agent_card_url : body.agent_card_url,
              auth_type: authType,
              auth_header: authHeader,
              auth_secret: authSecret,
              secret_mappings: body.secret_mappings === undefined ? row.secret_mappings : body.secret_mappings,
              version: row.version + 1,
              updated_at: Date.now(),
            },
            (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
          ),
        () => taken(slug),
      );
      if (changed === 0) throw Errors.conflict('The agent integration was changed by another request meanwhile; read it again and retry');
      // Users' own tokens were given for the old upstream: a new URL must not carry them elsewhere (as for MCP).
      await afterChange(row.id, moved);
      const view = presentIntegration(await fresh(row.id));
      req.audit = { resource: 'agent_integration', resourceId: row.id, action: 'update', workspaceId: row.workspace_id ?? undefined, before: presentIntegration(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/agent-integrations/:agentIntegrationId',
    scope: integrationScopes('delete'),
    async handle(req) {
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'delete', NOT_FOUND);
      const used = await database.count(agentServers, (c) => eq(c.agent_integration_id, row.id));
      if (used > 0) throw Errors.conflict(`The agent integration is used by ${used} agent server(s): delete them first`);
      await database.transaction(async (tx) => {
        await tx.delete(agentIntegrationWorkspaces, (c) => eq(c.agent_integration_id, row.id));
        await tx.delete(agentIntegrationSkills, (c) => eq(c.agent_integration_id, row.id));
        await tx.delete(agentIntegrations, (c) => eq(c.id, row.id));
      });
      req.audit = { resource: 'agent_integration', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id ?? undefined, before: presentIntegration(row) };
      return noContent();
    },
  };

  const workspacesOf = async (id: string) =>
    (await database.select(agentIntegrationWorkspaces, { where: (c) => eq(c.agent_integration_id, id), orderBy: (c) => [asc(c.workspace_id)], fresh: true })).map((r) => r.workspace_id);

  const getWorkspaces: AdminRoute = {
    method: 'GET',
    path: '/agent-integrations/:agentIntegrationId/workspaces',
    scope: 'organisation_agent_integrations.read',
    async handle(req) {
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'read', NOT_FOUND);
      return json({ object: 'agent_integration_workspaces', agent_integration_id: row.id, workspace_ids: row.workspace_id === null ? await workspacesOf(row.id) : [row.workspace_id] });
    },
  };

  const putWorkspaces: AdminRoute = {
    method: 'PUT',
    path: '/agent-integrations/:agentIntegrationId/workspaces',
    scope: 'organisation_agent_integrations.write',
    async handle(req) {
      const body = checkWorkspaces(req.body);
      const row = await lookup(req);
      if (row.workspace_id !== null) throw Errors.badRequest('A workspace integration belongs to its workspace: workspace access is for organisation-level integrations', 'workspace_ids');
      await requireIntegrationAccess(req, null, 'write', NOT_FOUND);
      const org = req.caller.organisationId;
      const ids = await Promise.all(body.workspace_ids.map(async (w, i) => (await findWorkspace(database, org, w, { fresh: true, param: `workspace_ids[${i}]` })).id));
      const before = await workspacesOf(row.id);
      const current = await database.select(agentIntegrationWorkspaces, { where: (c) => eq(c.agent_integration_id, row.id), fresh: true });
      await replaceChildren(
        database,
        current,
        [...new Set(ids)],
        (r, w) => r.workspace_id === w,
        (tx, gone) => tx.delete(agentIntegrationWorkspaces, (c) => inArray(c.id, gone)),
        (tx, workspaceId) =>
          tx.insert(agentIntegrationWorkspaces, { id: crypto.randomUUID(), organisation_id: org, agent_integration_id: row.id, workspace_id: workspaceId, created_at: Date.now() }),
      );
      const after = await workspacesOf(row.id);
      req.audit = { resource: 'agent_integration', resourceId: row.id, action: 'update_workspaces', before: { workspace_ids: before }, after: { workspace_ids: after } };
      return json({ object: 'agent_integration_workspaces', agent_integration_id: row.id, workspace_ids: after });
    },
  };

  const skillsOf = async (id: string) =>
    (await database.select(agentIntegrationSkills, { where: (c) => eq(c.agent_integration_id, id), orderBy: (c) => [asc(c.skill_id)], fresh: true })).map((r) => ({
      id: r.skill_id,
      name: r.name,
      description: r.description,
    }));

  const getSkills: AdminRoute = {
    method: 'GET',
    path: '/agent-integrations/:agentIntegrationId/skills',
    scope: 'agent_integration_skills.read',
    async handle(req) {
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'read', NOT_FOUND, false);
      return json({ object: 'agent_integration_skills', agent_integration_id: row.id, data: await skillsOf(row.id) });
    },
  };

  const putSkills: AdminRoute = {
    method: 'PUT',
    path: '/agent-integrations/:agentIntegrationId/skills',
    scope: 'agent_integration_skills.write',
    async handle(req) {
      const body = checkSkills(req.body);
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'write', NOT_FOUND, false);
      const seen = new Set<string>();
      body.skills.forEach((s, i) => {
        if (seen.has(s.id)) throw Errors.badRequest(`skills[${i}].id ${JSON.stringify(s.id)} is given twice`, `skills[${i}].id`);
        seen.add(s.id);
      });
      const before = await skillsOf(row.id);
      const current = await database.select(agentIntegrationSkills, { where: (c) => eq(c.agent_integration_id, row.id), fresh: true });
      await replaceChildren(
        database,
        current,
        body.skills,
        (r, w) => r.skill_id === w.id && r.name === w.name && r.description === (w.description ?? null),
        (tx, gone) => tx.delete(agentIntegrationSkills, (c) => inArray(c.id, gone)),
        (tx, skill) =>
          tx.insert(agentIntegrationSkills, {
            id: crypto.randomUUID(),
            organisation_id: row.organisation_id,
            agent_integration_id: row.id,
            skill_id: skill.id,
            name: skill.name,
            description: skill.description ?? null,
            created_at: Date.now(),
          }),
      );
      const after = await skillsOf(row.id);
      req.audit = { resource: 'agent_integration', resourceId: row.id, action: 'update_skills', workspaceId: row.workspace_id ?? undefined, before: { skills: before }, after: { skills: after } };
      return json({ object: 'agent_integration_skills', agent_integration_id: row.id, data: after });
    },
  };

  const removeSkill: AdminRoute = {
    method: 'DELETE',
    path: '/agent-integrations/:agentIntegrationId/skills/:skillId',
    scope: 'agent_integration_skills.delete',
    async handle(req) {
      const row = await lookup(req);
      await requireIntegrationAccess(req, row.workspace_id, 'delete', NOT_FOUND, false);
      const skill = req.params.skillId ?? '';
      const removed = await database.delete(agentIntegrationSkills, (c) => and(eq(c.agent_integration_id, row.id), eq(c.skill_id, skill)));
      if (removed === 0) throw Errors.notFound('The agent integration has no such skill');
      req.audit = { resource: 'agent_integration', resourceId: row.id, action: 'delete_skill', workspaceId: row.workspace_id ?? undefined, before: { skill_id: skill } };
      return noContent();
    },
  };

  return [listRoute, create, get, update, remove, getWorkspaces, putWorkspaces, getSkills, putSkills, removeSkill];
}
