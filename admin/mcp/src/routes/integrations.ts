/**
 * /mcp-integrations: where an MCP upstream is and how the gateway authenticates to it, for one workspace or the whole
 * organisation (access.ts says who may do what). The header value is sealed at rest and shown masked; a masked value
 * sent back keeps the stored one, unless the URL changes (a stored secret only goes where it was entered for).
 */
import { findWorkspace, requireActive, visibleWorkspaces } from '@gateway/admin-identity';
import { checkHeaderMappings, checkSlug, json, list, noContent, page, requireOrgAdmin, type SecretMapping, validator, writeWithSlug } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, asc, desc, eq, Errors, inArray, isNull, or, type SQL, type Where } from '@gateway/sdk';
import { type Static, Type } from '@sinclair/typebox';
import { requireReader, requireWriter } from '../access.ts';
import { BY_FIELD, type McpContext } from '../context.ts';
import { presentIntegration } from '../present.ts';
import { authSecretAt, mcpConnections, mcpIntegrations, mcpServers, ORGANISATION_SCOPE } from '../tables.ts';
import type { IntegrationRow } from '../upstream.ts';

const NOT_FOUND = 'No such MCP integration';
const MASK = '****';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Transport = Type.Union([Type.Literal('streamable-http'), Type.Literal('sse')]);
const Auth = Type.Union([
  Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('oauth'),
      /** Absent: the gateway registers itself with the authorization server (RFC 7591) when a user first connects. */
      client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
      client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('user_token'), header_name: Type.String({ minLength: 1, maxLength: 255, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('header'), header_name: Type.String({ minLength: 1, maxLength: 255, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }), header_value: Type.String({ minLength: 1, maxLength: 8192 }) },
    { additionalProperties: false },
  ),
]);
const Mapping = Type.Object(
  {
    target_field: Type.String({ minLength: 1, maxLength: 255 }),
    secret_reference_id: Type.String({ minLength: 1, maxLength: 255 }),
    secret_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    value_format: Type.Optional(Type.Union([Type.Literal('string'), Type.Literal('json')])),
  },
  { additionalProperties: false },
);
const Description = Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]);

const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      description: Type.Optional(Description),
      workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      organisation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      url: Url,
      transport: Type.Optional(Transport),
      auth: Type.Optional(Auth),
      secret_mappings: Type.Optional(Type.Array(Mapping, { maxItems: 32 })),
    },
    { additionalProperties: false },
  ),
);
const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Name),
      description: Type.Optional(Description),
      url: Type.Optional(Url),
      transport: Type.Optional(Transport),
      auth: Type.Optional(Auth),
      secret_mappings: Type.Optional(Type.Array(Mapping, { maxItems: 32 })),
    },
    { additionalProperties: false },
  ),
);

function checkUrl(value: string): void {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.hostname === '') throw Errors.badRequest('url must be an http(s) URL', 'url');
}

export function integrationRoutes(ctx: McpContext): AdminRoute[] {
  const { database } = ctx;

  async function lookup(req: AdminRequest): Promise<IntegrationRow> {
    const org = req.caller.organisationId;
    const ref = req.params.mcpIntegrationId ?? '';
    const rows = await database.select(mcpIntegrations, { where: (c) => and(eq(c.organisation_id, org), or(eq(c.id, ref), eq(c.slug, ref))), fresh: true });
    const row = rows.find((r) => r.id === ref) ?? rows.find((r) => r.workspace_id === req.caller.workspaceId) ?? rows.find((r) => r.workspace_id === null);
    if (!row) throw Errors.notFound(NOT_FOUND);
    return row;
  }

  /** What is sealed of an auth: the header's value, or the OAuth client's registration. */
  function sealedAuth(auth: Static<typeof Auth>, id: string): string | null {
    if (auth.type === 'header') return ctx.box().seal(auth.header_value, authSecretAt(id));
    if (auth.type === 'oauth' && auth.client_secret !== undefined && auth.client_id === undefined)
      throw Errors.badRequest('auth.client_secret needs auth.client_id (without both, the gateway registers its own client)', 'auth.client_id');
    if (auth.type === 'oauth') return ctx.box().sealJson({ client_id: auth.client_id, client_secret: auth.client_secret, scope: auth.scope }, authSecretAt(id));
    return null;
  }

  const writable = (req: AdminRequest, workspaceId: string | null) =>
    requireWriter(req.principal, workspaceId, 'managersWriteWsMcpIntegrations', ctx.security(), NOT_FOUND);

  /** The URL is refused now when it names a private address (checked again at every connection). */
  async function checkDestination(url: string): Promise<void> {
    checkUrl(url);
    await ctx.guard.check(url);
  }

  async function checkMappings(org: string, workspaceId: string | null, mappings: readonly SecretMapping[] | null | undefined): Promise<void> {
    if (!mappings || mappings.length === 0) return;
    checkHeaderMappings(mappings);
    const resolver = ctx.secrets();
    if (!resolver) throw Errors.badRequest('secret_mappings need the secret-references plugin, which is not loaded', 'secret_mappings');
    await resolver.check(org, workspaceId === null ? 'all' : [workspaceId], mappings);
  }

  /** Deletes every user connection to the servers using the integration. */
  async function revokeConnections(integrationId: string): Promise<void> {
    const servers = await database.select(mcpServers, { where: (c) => eq(c.mcp_integration_id, integrationId), fresh: true });
    if (servers.length === 0) return;
    const ids = servers.map((s) => s.id);
    await database.delete(mcpConnections, (c) => inArray(c.mcp_server_id, ids));
  }

  /** Servers using the integration read their upstream again (not awaited: the answer does not wait for upstreams). */
  async function resync(integrationId: string): Promise<void> {
    const servers = await database.select(mcpServers, { where: (c) => eq(c.mcp_integration_id, integrationId), fresh: true });
    for (const server of servers) void ctx.sync.syncServer(server.id);
  }

  const listRoute: AdminRoute = {
    method: 'GET',
    path: '/mcp-integrations',
    scope: 'mcp_integrations.read',
    async handle(req) {
      const p = page(req.query);
      const org = req.caller.organisationId;
      const filter = req.query.get('workspace_id');
      let only: string | undefined;
      if (filter) {
        only = (await findWorkspace(database, org, filter, BY_FIELD)).id;
        await requireReader(req.principal, only, 'No such workspace: workspace_id');
      }
      const visible = only ? [only] : await visibleWorkspaces(database, req.principal);
      const where: Where<typeof mcpIntegrations.columns> = (c) => {
        const parts: (SQL | undefined)[] = [eq(c.organisation_id, org)];
        if (only) parts.push(eq(c.workspace_id, only));
        else if (visible !== 'all') parts.push(visible.length > 0 ? or(isNull(c.workspace_id), inArray(c.workspace_id, visible)) : isNull(c.workspace_id));
        return and(...parts);
      };
      const [total, rows] = await Promise.all([
        database.count(mcpIntegrations, where),
        database.select(mcpIntegrations, { where, orderBy: (c) => [desc(c.created_at), asc(c.id)], limit: p.limit, offset: p.offset }),
      ]);
      return list(rows.map(presentIntegration), total);
    },
  };

  const create: AdminRoute = {
    method: 'POST',
    path: '/mcp-integrations',
    scope: 'mcp_integrations.write',
    async handle(req) {
      const body = checkCreate(req.body);
      const org = req.caller.organisationId;
      let workspaceId: string | null;
      if (body.organisation_id !== undefined) {
        if (body.workspace_id !== undefined) throw Errors.badRequest('Give workspace_id or organisation_id, not both', 'organisation_id');
        if (body.organisation_id !== org) throw Errors.notFound('No such organisation: organisation_id');
        requireOrgAdmin(req.principal);
        workspaceId = null;
      } else {
        const workspace = await findWorkspace(database, org, body.workspace_id ?? req.caller.workspaceId, BY_FIELD);
        await writable(req, workspace.id);
        workspaceId = requireActive(workspace);
      }
      await checkDestination(body.url);
      await checkMappings(org, workspaceId, body.secret_mappings);
      const id = crypto.randomUUID();
      const now = Date.now();
      const auth = body.auth ?? { type: 'none' as const };
      const given = body.slug === undefined ? undefined : checkSlug(body.slug);
      await writeWithSlug(
        given,
        body.name,
        (slug) =>
          database.insert(mcpIntegrations, {
            id,
            organisation_id: org,
            workspace_id: workspaceId,
            scope: workspaceId ?? ORGANISATION_SCOPE,
            name: body.name,
            slug,
            description: body.description ?? null,
            url: body.url,
            transport: body.transport ?? 'streamable-http',
            auth_type: auth.type,
            auth_header: auth.type === 'none' || auth.type === 'oauth' ? null : auth.header_name,
            auth_secret: sealedAuth(auth, id),
            secret_mappings: body.secret_mappings ?? null,
            version: 1,
            created_at: now,
            updated_at: now,
          }),
        (taken) => Errors.conflict(`The slug ${JSON.stringify(taken)} is already taken in this scope`, 'slug'),
      );
      const [row] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
      if (!row) throw Errors.internal('The MCP integration vanished after it was written');
      const view = presentIntegration(row);
      req.audit = { resource: 'mcp_integration', resourceId: id, action: 'create', workspaceId, after: view };
      return json(view, 201);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/mcp-integrations/:mcpIntegrationId',
    scope: 'mcp_integrations.read',
    async handle(req) {
      const row = await lookup(req);
      await requireReader(req.principal, row.workspace_id, NOT_FOUND);
      return json(presentIntegration(row));
    },
  };

  const update: AdminRoute = {
    method: 'PUT',
    path: '/mcp-integrations/:mcpIntegrationId',
    scope: 'mcp_integrations.write',
    async handle(req) {
      const body = checkUpdate(req.body);
      const row = await lookup(req);
      await writable(req, row.workspace_id);
      const url = body.url ?? row.url;
      if (body.url !== undefined) await checkDestination(body.url);
      if (body.secret_mappings !== undefined) await checkMappings(row.organisation_id, row.workspace_id, body.secret_mappings);
      let authColumns: Partial<IntegrationRow> = {};
      if (body.auth?.type === 'none') authColumns = { auth_type: 'none', auth_header: null, auth_secret: null };
      else if (body.auth?.type === 'oauth') authColumns = { auth_type: 'oauth', auth_header: null, auth_secret: sealedAuth(body.auth, row.id) };
      else if (body.auth?.type === 'user_token') authColumns = { auth_type: 'user_token', auth_header: body.auth.header_name, auth_secret: null };
      else if (body.auth?.type === 'header') {
        const keep = body.auth.header_value === MASK;
        if (keep && (row.auth_type !== 'header' || !row.auth_secret)) throw Errors.badRequest('auth.header_value: there is no stored value to keep; enter it', 'auth.header_value');
        if (keep && url !== row.url)
          throw Errors.badRequest('url changed, so the stored auth.header_value is not kept: enter it again (a stored secret is only sent where it was entered for)', 'auth.header_value');
        authColumns = {
          auth_type: 'header',
          auth_header: body.auth.header_name,
          auth_secret: keep ? row.auth_secret : ctx.box().seal(body.auth.header_value, authSecretAt(row.id)),
        };
      } else if (url !== row.url && row.auth_type === 'header')
        throw Errors.badRequest('url changed, so the stored auth.header_value is not kept: enter it again (a stored secret is only sent where it was entered for)', 'auth.header_value');
      else if (url !== row.url && row.auth_type === 'oauth' && body.auth === undefined)
        // The client secret would go to whatever authorization server the new URL names (discovery, refresh).
        throw Errors.badRequest('url changed, so the stored OAuth client (client_id, client_secret) is not kept: enter auth again (a stored secret is only sent where it was entered for)', 'auth');
      const changed = await database.update(
        mcpIntegrations,
        {
          name: body.name ?? row.name,
          description: body.description === undefined ? row.description : body.description,
          url,
          transport: body.transport ?? row.transport,
          ...authColumns,
          secret_mappings: body.secret_mappings === undefined ? row.secret_mappings : body.secret_mappings,
          version: row.version + 1,
          updated_at: Date.now(),
        },
        (c) => and(eq(c.id, row.id), eq(c.version, row.version)),
      );
      if (changed === 0) throw Errors.conflict('The MCP integration was changed by another request meanwhile; read it again and retry');
      const [after] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, row.id), limit: 1, fresh: true });
      if (!after) throw Errors.notFound(NOT_FOUND);
      // Users' own tokens (user_token, OAuth) were given for the old upstream: a writer of the integration must not
      // redirect them to a URL of their choosing, so a new URL revokes them (after the write: a connection made
      // since was made for the new URL) and each user connects again.
      if (url !== row.url) await revokeConnections(row.id);
      await resync(row.id);
      const view = presentIntegration(after);
      req.audit = { resource: 'mcp_integration', resourceId: row.id, action: 'update', workspaceId: row.workspace_id, before: presentIntegration(row), after: view };
      return json(view);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/mcp-integrations/:mcpIntegrationId',
    scope: 'mcp_integrations.delete',
    async handle(req) {
      const row = await lookup(req);
      await writable(req, row.workspace_id);
      const using = await database.select(mcpServers, { where: (c) => eq(c.mcp_integration_id, row.id), fresh: true });
      if (using.length > 0) throw Errors.conflict(`MCP servers use this integration: ${using.map((s) => s.id).join(', ')}; delete them first`);
      await database.delete(mcpIntegrations, (c) => eq(c.id, row.id));
      req.audit = { resource: 'mcp_integration', resourceId: row.id, action: 'delete', workspaceId: row.workspace_id, before: presentIntegration(row) };
      return noContent();
    },
  };

  return [listRoute, create, get, update, remove];
}
