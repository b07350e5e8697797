/**
 * The agent gateway (docs/admin/agents.md): agent integrations (an upstream A2A agent and the gateway-held
 * credentials, organisation- or workspace-level, with workspace access and recorded skills), agent servers exposed to
 * workspaces (skills, user access, users' own credentials, the upstream agent card synced on a schedule), and the
 * /v1/agent-servers/:id/a2a JSON-RPC proxy.
 */
import { AdminServices, lazySecretBox, rebindSealed, type SecretResolver, toolCallServices, toolMaxAnswerBytes } from '@gateway/admin-kit';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { definePlugin, Services } from '@gateway/sdk';
import { AgentCallLog, type LogSink } from './call-log.ts';
import { AgentCardSync, cardSyncSettingsFromEnv } from './card-sync.ts';
import type { AgentsContext } from './context.ts';
import { INVOKE_SCOPE, invokeRoutes } from './invoke.ts';
import { connectionRoutes } from './routes/connections.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { serverRoutes } from './routes/servers.ts';
import { agentConnections, agentIntegrations, agentMigrations } from './tables.ts';

export { agentConnections, agentMigrations, agentIntegrations, agentServers } from './tables.ts';
export { INVOKE_SCOPE } from './invoke.ts';
export { taskOf } from './a2a-messages.ts';

const crud = (resource: string) => [`${resource}.read`, `${resource}.write`, `${resource}.delete`];

export const SCOPES = [
  ...crud('organisation_agent_integrations'),
  ...crud('workspace_agent_integrations'),
  ...crud('agent_servers'),
  ...crud('agent_server_skills'),
  ...crud('agent_integration_skills'),
  ...crud('agent_server_user_access'),
  INVOKE_SCOPE,
] as const;

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(agentMigrations);
    const box = lazySecretBox(api.env);
    await rebindSealed(database, { table: agentIntegrations, fields: ['auth_secret'] }, box, api.logger);
    await rebindSealed(database, { table: agentConnections, fields: ['secret'] }, box, api.logger);
    let sink: LogSink | undefined;
    let secretResolver: SecretResolver | undefined;
    const secrets = () => secretResolver;
    const guard = api.service(Services.hostGuard);
    const cardSync = new AgentCardSync({ database, box, secrets, guard, state: api.state, logger: api.logger, settings: cardSyncSettingsFromEnv(api.env) });
    const ctx: AgentsContext = {
      database,
      box,
      guard,
      logger: api.logger,
      callLog: new AgentCallLog(() => sink),
      maxAnswerBytes: toolMaxAnswerBytes(api.env),
      toolCalls: toolCallServices(api),
      secrets,
      cardSync,
    };
    api.onReady(() => {
      sink = api.optional(RequestLogServices.queue);
      secretResolver = api.optional(AdminServices.secretReferences);
      api.optional(Services.apiKeyScopes)?.add(SCOPES);
      cardSync.start();
    });
    api.onClose(() => cardSync.stop());
    for (const route of [...integrationRoutes(ctx), ...serverRoutes(ctx), ...connectionRoutes(ctx), ...invokeRoutes(ctx)]) api.route(route);
  },
});
