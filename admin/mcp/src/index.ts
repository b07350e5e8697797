/**
 * The MCP gateway (docs/admin/mcp.md): MCP integrations (upstream URL, transport, credentials) and MCP servers
 * exposed to workspaces, their metadata synced from the upstream, and the /v1/mcp/:slug proxy.
 */
import { AdminServices, lazySecretBox, toolCallServices, toolMaxAnswerBytes, rebindSealed, type SecretResolver, type SecuritySettingsService } from '@gateway/admin-kit';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { type AdminRoute, definePlugin, Services } from '@gateway/sdk';
import type { McpContext, ProxyTarget } from './context.ts';
import { INVOKE_SCOPE, proxyRoutes } from './proxy.ts';
import { connectionRoutes } from './routes/connections.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { serverRoutes } from './routes/servers.ts';
import { McpOAuth } from './oauth.ts';
import { McpSessions } from './sessions.ts';
import { SseBridges } from './sse-bridge.ts';
import { McpSync, syncSettingsFromEnv } from './sync.ts';
import { TARGET_TTL_MS, TargetCache } from './target-cache.ts';
import { mcpConnections, mcpIntegrations, mcpMigrations } from './tables.ts';
import { type LogSink, ToolCallLog } from './tool-log.ts';

export { mcpConnections, mcpIntegrations, mcpMigrations, mcpServers } from './tables.ts';
export { readMetadata, type McpMetadata } from './metadata.ts';
export { McpSync, syncSettingsFromEnv } from './sync.ts';
export { INVOKE_SCOPE, toolAllowed } from './proxy.ts';

export const SCOPES = [
  'mcp_integrations.read',
  'mcp_integrations.write',
  'mcp_integrations.delete',
  'mcp_servers.read',
  'mcp_servers.write',
  'mcp_servers.delete',
  INVOKE_SCOPE,
] as const;

/** Default lifetime of an idle client session. */
const SESSION_TTL_MS = 3_600_000;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(mcpMigrations);
    const box = lazySecretBox(api.env);
    await rebindSealed(database, { table: mcpIntegrations, fields: ['auth_secret'] }, box, api.logger);
    await rebindSealed(database, { table: mcpConnections, fields: ['secret'] }, box, api.logger);
    const ttl = Number(api.env.MCP_SESSION_TTL_MS || SESSION_TTL_MS);
    if (!Number.isInteger(ttl) || ttl <= 0) throw new Error('MCP_SESSION_TTL_MS must be a positive integer (milliseconds)');
    const targetTtl = Number(api.env.MCP_PROXY_CACHE_TTL_MS || TARGET_TTL_MS);
    if (!Number.isInteger(targetTtl) || targetTtl < 0) throw new Error('MCP_PROXY_CACHE_TTL_MS must be a non-negative integer (milliseconds)');
    const oauthStateTtl = Number(api.env.MCP_OAUTH_STATE_TTL_MS || 600_000);
    if (!Number.isInteger(oauthStateTtl) || oauthStateTtl <= 0) throw new Error('MCP_OAUTH_STATE_TTL_MS must be a positive integer (milliseconds)');
    let secrets: SecretResolver | undefined;
    let security: SecuritySettingsService | undefined;
    let sink: LogSink | undefined;
    const guard = api.service(Services.hostGuard);
    const deps = { box, secrets: () => secrets };
    const sync = new McpSync({ ...deps, database, guard, state: api.state, logger: api.logger, settings: syncSettingsFromEnv(api.env) });
    const ctx: McpContext = {
      database,
      box,
      guard,
      state: api.state,
      logger: api.logger,
      sync,
      secrets: () => secrets,
      security: () => security,
      toolLog: new ToolCallLog(() => sink),
      maxAnswerBytes: toolMaxAnswerBytes(api.env),
      targets: new TargetCache<ProxyTarget>(api.state, api.logger, targetTtl),
      toolCalls: toolCallServices(api),
      oauth: new McpOAuth({
        database,
        guard,
        state: api.state,
        box,
        redirectUrl: api.env.MCP_OAUTH_REDIRECT_URL || undefined,
        stateTtlMs: oauthStateTtl,
      }),
    };
    ctx.targets.start();
    api.onReady(() => {
      // A member leaving or a workspace archived ends the proxy's kept reader checks at once.
      const events = api.optional(AdminServices.events);
      events?.on('member.removed', () => ctx.targets.changed());
      events?.on('workspace.archived', () => ctx.targets.changed());
      secrets = api.optional(AdminServices.secretReferences);
      security = api.optional(AdminServices.securitySettings);
      sink = api.optional(RequestLogServices.queue);
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
      sync.start();
    });
    const bridges = new SseBridges(ttl);
    api.onClose(async () => {
      await sync.stop();
      ctx.targets.stop();
      await bridges.closeAll();
    });
    for (const route of [...integrationRoutes(ctx), ...serverRoutes(ctx), ...connectionRoutes(ctx)]) api.route(writes(route) ? clearingTargets(route, ctx) : route);
    for (const route of proxyRoutes(ctx, new McpSessions(api.state, ttl), bridges)) api.route(route);
  },
});

/** Routes that may change what the proxy reads: every one but the reads (the OAuth callback writes a connection). */
const writes = (route: AdminRoute) => route.method !== 'GET' || route.path === '/mcp/oauth/callback';

/** The route, clearing the proxy's kept reads (here and in the other processes) once it has answered. */
function clearingTargets(route: AdminRoute, ctx: McpContext): AdminRoute {
  return {
    ...route,
    async handle(req) {
      try {
        return await route.handle(req);
      } finally {
        await ctx.targets.changed();
      }
    },
  };
}
