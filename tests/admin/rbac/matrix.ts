/**
 * The expectation table: every administration route (`METHOD path`, as registered), and variants of a route whose
 * answer depends on its target (`METHOD path [variant]`), against every principal of principals.ts.
 *
 *   ok   a 2xx (the fixture's body is valid, so anything else is a wrong refusal or a broken fixture)
 *   403  refused (permission_error)
 *   404  refused by hiding: the resource (or the workspace the call acts on) is one the caller cannot see at all;
 *        every row with a 404 says why in NOTES
 *
 * Written by hand from SPEC.md's roles (owners and admins have full access; managers and members per each route's
 * docs; a workspace-service key acts as admin of its own workspace only; organisation-level routes are closed to
 * workspace keys) and docs/admin/*.md. Route calls act on workspace A unless the row says otherwise.
 */
import { COLUMNS, PRINCIPALS, type PrincipalName } from './principals.ts';

export type Outcome = 'ok' | 403 | 404;

/** Organisation owners and admins (and organisation-service keys) only. */
const ORG_ADMINS = 'ok   ok   ok   403  403  403  403  403  403  403';
/** Any key of the organisation with the scope (lists filtered to what the caller sees). */
const ANY_KEY = 'ok   ok   ok   403  ok   ok   ok   ok   ok   ok';
/** Any role in workspace A; a caller without one there does not see it. */
const ROLE_IN_A = 'ok   ok   ok   403  ok   404  ok   ok   ok   404';
/** Managers and admins of A. */
const MANAGER_OF_A = 'ok   ok   ok   403  ok   404  ok   ok   403  404';
/** Admins of A. */
const ADMIN_OF_A = 'ok   ok   ok   403  ok   404  ok   403  403  404';
/** Who manages the workspace keys of A: organisation admins, A's service key, A's admins; others do not see them. */
const KEY_ADMINS_OF_A = 'ok   ok   ok   403  ok   404  ok   404  404  404';
/** Organisation admins; the key is invisible to everyone else. */
const ORG_ADMINS_ONLY_SEE = 'ok   ok   ok   403  404  404  404  404  404  404';
/** A workspace-user key of the owner in A: owners only; seen (403) by whoever manages A's keys, hidden from others. */
const OWNER_KEY = 'ok   403  403  403  403  404  403  404  404  404';
/** Owners only. */
const OWNERS = 'ok   403  403  403  403  403  403  403  403  403';

// prettier-ignore
const TABLE: Record<string, string> = {
  // `[self]` rows: people act on themselves, keys without a user on another user (as in the row above them).
  //                                                                   own  adm  osv  ons  wsA  wsB  aAd  aMg  aMb  bMb
  // ---- identity: workspaces (docs/admin/identity.md) ----
  'GET /workspaces':                                                  ANY_KEY,
  'POST /workspaces':                                                 ORG_ADMINS,
  'GET /workspaces/:workspaceId':                                     ROLE_IN_A,
  'PUT /workspaces/:workspaceId':                                     ADMIN_OF_A,
  'DELETE /workspaces/:workspaceId':                                  ORG_ADMINS, // a fresh workspace: organisation admins only
  // A fresh workspace each person is admin of (service keys of A and B have no role in it): archiving and deleting
  // need an organisation admin, whatever the role in the workspace.
  'PUT /workspaces/:workspaceId [archive, caller admin of it]':       'ok   ok   ok   403  404  404  403  403  403  403',
  'DELETE /workspaces/:workspaceId [caller admin of it]':             ORG_ADMINS,
  // ---- identity: members of A ----
  'GET /workspaces/:workspaceId/users':                               ROLE_IN_A,
  'POST /workspaces/:workspaceId/users':                              MANAGER_OF_A,
  'POST /workspaces/:workspaceId/users [role admin]':                 ADMIN_OF_A, // managers never grant admin
  'PUT /workspaces/:workspaceId/users/:userId':                       MANAGER_OF_A, // member → manager
  'PUT /workspaces/:workspaceId/users/:userId [target admin]':        ADMIN_OF_A, // managers never change an admin
  'DELETE /workspaces/:workspaceId/users/:userId':                    MANAGER_OF_A,
  'DELETE /workspaces/:workspaceId/users/:userId [target admin]':     ADMIN_OF_A,
  // ---- SCIM: a group mapped to a workspace (docs/admin/scim.md); the /scim/v2 routes are public (PUBLIC_ROUTES) ----
  'POST /scim/workspaces':                                            ORG_ADMINS,
  // ---- SSO (docs/admin/sso.md); /sso/login, /sso/callback and /sso/logout are public (PUBLIC_ROUTES) ----
  'GET /sso/oidc':                                                     ORG_ADMINS,
  'PUT /sso/oidc':                                                     ORG_ADMINS,
  'DELETE /sso/sessions/:sessionId':                                   ORG_ADMINS,
  // ---- identity: invitations ----
  'POST /users/invites':                                              ORG_ADMINS,
  'POST /users/invites [role owner]':                                 OWNERS, // only an owner invites an owner
  'GET /users/invites':                                               ORG_ADMINS,
  'GET /users/invites/:inviteId':                                     ORG_ADMINS,
  'DELETE /users/invites/:inviteId':                                  ORG_ADMINS,
  // ---- identity: users ----
  'GET /users':                                                       ORG_ADMINS,
  'POST /users':                                                      ORG_ADMINS,
  'POST /users [role owner]':                                         OWNERS, // the organisation has an owner: only owners make more
  'GET /users/:userId':                                               ORG_ADMINS, // another user
  'GET /users/:userId [self]':                                        'ok   ok   ok   403  403  403  ok   ok   ok   ok',
  'PUT /users/:userId':                                               ORG_ADMINS, // another user's name
  'PUT /users/:userId [self, name]':                                  'ok   ok   ok   403  403  403  ok   ok   ok   ok',
  'PUT /users/:userId [self, role]':                                  ORG_ADMINS, // members may not make themselves admins
  'PUT /users/:userId [self, to owner]':                              OWNERS, // nobody but an owner makes an owner
  'DELETE /users/:userId':                                            ORG_ADMINS,
  'DELETE /users/:userId [target owner]':                             OWNERS,

  // ---- settings (docs/admin/settings.md) ----
  'GET /settings/security':                                           ORG_ADMINS,
  'PUT /settings/security':                                           ORG_ADMINS,
  'GET /workspaces/:workspaceId/settings/security':                   ADMIN_OF_A,
  'PUT /workspaces/:workspaceId/settings/security':                   ADMIN_OF_A,
  'GET /settings/session':                                            ORG_ADMINS,
  'PUT /settings/session':                                            ORG_ADMINS,
  'GET /settings/api-keys':                                           ORG_ADMINS,
  'PUT /settings/api-keys':                                           ORG_ADMINS,
  'GET /workspaces/:workspaceId/settings/api-keys':                   ADMIN_OF_A,
  'PUT /workspaces/:workspaceId/settings/api-keys':                   ADMIN_OF_A,
  'GET /workspaces/:workspaceId/cache-settings':                      ROLE_IN_A,
  'PUT /workspaces/:workspaceId/cache-settings':                      ADMIN_OF_A, // a saved config of A as the embeddings target
  'GET /email-domains':                                               ORG_ADMINS,
  'POST /email-domains':                                              ORG_ADMINS,
  'GET /email-domains/:emailDomainId':                                ORG_ADMINS,
  'PUT /email-domains/:emailDomainId':                                ORG_ADMINS,
  'DELETE /email-domains/:emailDomainId':                             ORG_ADMINS,
  'GET /logs':                                                        ANY_KEY,
  'GET /logs/:logId':                                                 ROLE_IN_A, // a log of A (default security settings)
  // saved log filters (docs/admin/settings.md): a workspace's are everyone's with a role there; the organisation's are
  // read by all and written by organisation owners and admins
  'GET /logs/saved-filters':                                          ANY_KEY,
  'POST /logs/saved-filters':                                         ROLE_IN_A, // saved in A (named by slug)
  'POST /logs/saved-filters [organisation]':                          ORG_ADMINS,
  'GET /logs/saved-filters/:savedFilterId':                           ROLE_IN_A, // a filter of A
  'PUT /logs/saved-filters/:savedFilterId':                           ROLE_IN_A,
  'DELETE /logs/saved-filters/:savedFilterId':                        ROLE_IN_A,
  // log exports: any key with logs.export asks for one; an export is seen by its key and organisation admins
  'POST /logs/exports':                                               ANY_KEY,
  'GET /logs/exports/:exportId':                                      ORG_ADMINS_ONLY_SEE, // asked for by the bootstrap key
  'GET /logs/exports/:exportId/download':                             ORG_ADMINS_ONLY_SEE,
  'GET /logs/exports':                                                ANY_KEY, // each key's own; organisation admins all
  'DELETE /logs/exports/:exportId':                                   ORG_ADMINS_ONLY_SEE, // a fresh export of the bootstrap key
  'GET /logs/groups/:groupBy':                                        ANY_KEY,
  'GET /analytics/summary':                                           ANY_KEY, // aggregates of the logs the caller sees
  'GET /analytics/graphs/:metric':                                    ANY_KEY,
  'GET /analytics/groups/:groupBy':                                   ANY_KEY,

  // ---- secret references (docs/admin/secret-references.md; SPEC.md: org owners and admins) ----
  'GET /secret-references':                                           ORG_ADMINS,
  'POST /secret-references':                                          ORG_ADMINS,
  'GET /secret-references/:id':                                       ORG_ADMINS,
  'PUT /secret-references/:id':                                       ORG_ADMINS,
  'DELETE /secret-references/:id':                                    ORG_ADMINS,

  // ---- API keys (admin/api-keys/src/access.ts: organisation admins manage every key; workspace admins (and the
  // workspace's service key) the workspace keys of their workspace; a user reads and rotates their own keys) ----
  'GET /api-keys':                                                    ANY_KEY, // filtered to what the caller sees
  'GET /api-keys/self':                                               ANY_KEY, // the calling key itself (the web console asks it)
  'POST /api-keys':                                                   ADMIN_OF_A, // a workspace-service key of A
  'POST /api-keys [workspace-user of member A]':                      ADMIN_OF_A,
  // A workspace-user key acts with its user's organisation role: making one for someone of a higher role than one's
  // own (or rotating theirs, which answers the new secret) would hand the caller that role. So an owner's keys are
  // made, rotated, revealed, changed and deleted by owners only, an admin's by organisation admins (the
  // organisation-service key acts as one); workspace admins manage members' keys only (docs/admin/api-keys.md;
  // identity.md: only an owner makes, changes or removes an owner). Reading a key shows no secret: as for any key.
  'POST /api-keys [workspace-user of the owner]':                     'ok   403  403  403  403  404  403  403  403  404',
  'POST /api-keys [workspace-user of the organisation admin]':        'ok   ok   ok   403  403  404  403  403  403  404',
  'POST /api-keys [organisation-service]':                            ORG_ADMINS,
  'GET /api-keys/:apiKeyId':                                          KEY_ADMINS_OF_A, // A's workspace-service key
  'GET /api-keys/:apiKeyId [user key of member A]':                   'ok   ok   ok   403  ok   404  ok   404  ok   404',
  'GET /api-keys/:apiKeyId [user key of the owner]':                  KEY_ADMINS_OF_A,
  'GET /api-keys/:apiKeyId [organisation-service]':                   ORG_ADMINS_ONLY_SEE,
  'PUT /api-keys/:apiKeyId':                                          KEY_ADMINS_OF_A,
  'PUT /api-keys/:apiKeyId [user key of member A]':                   'ok   ok   ok   403  ok   404  ok   404  403  404',
  'PUT /api-keys/:apiKeyId [user key of the owner]':                  OWNER_KEY,
  'PUT /api-keys/:apiKeyId [organisation-service]':                   ORG_ADMINS_ONLY_SEE,
  'DELETE /api-keys/:apiKeyId':                                       KEY_ADMINS_OF_A,
  'DELETE /api-keys/:apiKeyId [user key of member A]':                'ok   ok   ok   403  ok   404  ok   404  403  404',
  'DELETE /api-keys/:apiKeyId [user key of the owner]':               OWNER_KEY,
  'POST /api-keys/:apiKeyId/rotate':                                  KEY_ADMINS_OF_A,
  'POST /api-keys/:apiKeyId/rotate [user key of member A]':           'ok   ok   ok   403  ok   404  ok   404  ok   404',
  'POST /api-keys/:apiKeyId/rotate [organisation-service]':           ORG_ADMINS_ONLY_SEE,
  'POST /api-keys/:apiKeyId/rotate [user key of the owner]':          OWNER_KEY,
  'POST /api-keys/:apiKeyId/rotate [user key of the organisation admin]': 'ok   ok   ok   403  403  404  403  404  404  404',
  'POST /api-keys/:apiKeyId/reveal':                                  KEY_ADMINS_OF_A,
  // A waiting secret of a workspace-user key was shown to nobody: its user alone picks it up.
  'POST /api-keys/:apiKeyId/reveal [user key of member A]':           '403  403  403  403  403  404  403  404  ok   404',
  'POST /api-keys/:apiKeyId/reveal [user key of the owner]':          OWNER_KEY,

  // ---- audit log (docs/admin/audit.md) ----
  'GET /audit-logs':                                                  ORG_ADMINS,
  'GET /audit-logs/:id':                                              ORG_ADMINS,

  // ---- saved configs of A (docs/admin/configs.md) ----
  'GET /configs':                                                     ANY_KEY, // lists what the key sees
  'POST /configs':                                                    MANAGER_OF_A,
  'GET /configs/:configId':                                           ROLE_IN_A,
  'GET /configs/:configId/versions':                                  ROLE_IN_A,
  'PUT /configs/:configId':                                           MANAGER_OF_A,
  'POST /configs/:configId/validate':                                 MANAGER_OF_A, // a dry run of the PUT
  'DELETE /configs/:configId':                                        MANAGER_OF_A,
  // ---- model aliases of A (docs/clients.md) ----
  'GET /model-aliases':                                               ANY_KEY, // lists what the key sees
  'POST /model-aliases':                                              MANAGER_OF_A,
  'GET /model-aliases/:aliasId':                                      ROLE_IN_A,
  'PUT /model-aliases/:aliasId':                                      MANAGER_OF_A,
  'DELETE /model-aliases/:aliasId':                                   MANAGER_OF_A,

  // ---- prompts and partials of A (docs/admin/prompts.md); security settings at their defaults: members view, managers write ----
  'GET /prompts':                                                     ANY_KEY, // lists what the key may view
  'POST /prompts':                                                    MANAGER_OF_A,
  'GET /prompts/:promptId':                                           ROLE_IN_A,
  'GET /prompts/:promptId/versions':                                  ROLE_IN_A,
  'GET /prompts/:promptId/versions/:version':                         ROLE_IN_A,
  'PUT /prompts/:promptId':                                           MANAGER_OF_A,
  'PUT /prompts/:promptId/makeDefault':                               MANAGER_OF_A,
  'DELETE /prompts/:promptId':                                        MANAGER_OF_A,
  // Run by id from another workspace: refused (403) as a saved config of another workspace is; organisation-service keys act anywhere.
  'POST /prompts/:promptId/render':                                   'ok   ok   ok   403  ok   403  ok   ok   ok   403',
  'POST /prompts/:promptId/completions':                              'ok   ok   ok   403  ok   403  ok   ok   ok   403',
  'GET /prompts/partials':                                            ANY_KEY,
  'POST /prompts/partials':                                           MANAGER_OF_A,
  'GET /prompts/partials/:partialId':                                 ROLE_IN_A,
  'GET /prompts/partials/:partialId/versions':                        ROLE_IN_A,
  'PUT /prompts/partials/:partialId':                                 MANAGER_OF_A,
  'PUT /prompts/partials/:partialId/makeDefault':                     MANAGER_OF_A,
  'DELETE /prompts/partials/:partialId':                              MANAGER_OF_A,

  // ---- saved guardrails (docs/admin/guardrails.md): of A, or organisation-wide ----
  'GET /guardrails':                                                  ANY_KEY, // lists what the key sees
  'POST /guardrails':                                                 MANAGER_OF_A,
  'POST /guardrails [organisation-wide]':                             ORG_ADMINS,
  'GET /guardrails/:guardrailId':                                     ROLE_IN_A,
  'GET /guardrails/:guardrailId [organisation-wide]':                 ANY_KEY,
  'PUT /guardrails/:guardrailId':                                     MANAGER_OF_A,
  'PUT /guardrails/:guardrailId [organisation-wide]':                 ORG_ADMINS,
  'DELETE /guardrails/:guardrailId':                                  MANAGER_OF_A,
  'DELETE /guardrails/:guardrailId [organisation-wide]':              ORG_ADMINS,

  // ---- MCP integrations and servers (docs/admin/mcp.md): of A, or organisation-wide; managers write while
  // managersWriteWsMcpIntegrations / managersWriteMcpServers are on (their default) ----
  'GET /mcp-integrations':                                            ANY_KEY, // lists what the key sees
  'POST /mcp-integrations':                                           MANAGER_OF_A,
  'POST /mcp-integrations [organisation-wide]':                       ORG_ADMINS,
  'GET /mcp-integrations/:mcpIntegrationId':                          ROLE_IN_A,
  'GET /mcp-integrations/:mcpIntegrationId [organisation-wide]':      ANY_KEY,
  'PUT /mcp-integrations/:mcpIntegrationId':                          MANAGER_OF_A,
  'PUT /mcp-integrations/:mcpIntegrationId [organisation-wide]':      ORG_ADMINS,
  'DELETE /mcp-integrations/:mcpIntegrationId':                       MANAGER_OF_A,
  'DELETE /mcp-integrations/:mcpIntegrationId [organisation-wide]':   ORG_ADMINS,
  'GET /mcp-servers':                                                 ANY_KEY, // lists what the key sees
  'POST /mcp-servers':                                                MANAGER_OF_A,
  'GET /mcp-servers/:mcpServerId':                                    ROLE_IN_A,
  'GET /mcp-servers/:mcpServerId/metadata':                           ROLE_IN_A,
  'POST /mcp-servers/:mcpServerId/sync':                              MANAGER_OF_A,
  // Connections are users' own: keys without a user (organisation and workspace service keys) have none to make.
  'GET /mcp-servers/:mcpServerId/connections':                        ROLE_IN_A,
  'POST /mcp-servers/:mcpServerId/connections':                       'ok   ok   403  403  403  404  ok   ok   ok   404',
  'DELETE /mcp-servers/:mcpServerId/connections':                     'ok   ok   ok   403  ok   404  ok   ok   ok   404', // member A's: by A, or by managers+
  'POST /mcp-servers/:mcpServerId/connections/authorize':             'ok   ok   403  403  403  404  ok   ok   ok   404',
  'PUT /mcp-servers/:mcpServerId':                                    MANAGER_OF_A,
  'DELETE /mcp-servers/:mcpServerId':                                 MANAGER_OF_A,
  // The proxy acts in the caller's workspace: the server is A's.
  'POST /mcp/:slug':                                                  'ok   ok   404  403  ok   404  ok   ok   ok   404',
  'GET /mcp/:slug':                                                   'ok   ok   404  403  ok   404  ok   ok   ok   404',
  'DELETE /mcp/:slug':                                                '404  404  404  403  404  404  404  404  404  404',

  // ---- agent gateway (docs/admin/agents.md): organisation integrations (owners and admins write; workspace access,
  // skills), integrations of A (A's admins write), servers of A (managers and admins write), the A2A proxy ----
  'GET /agent-integrations':                                          ANY_KEY, // lists what the key sees
  'POST /agent-integrations':                                         ORG_ADMINS,
  'POST /agent-integrations [workspace A]':                           ADMIN_OF_A,
  'GET /agent-integrations/:agentIntegrationId':                      ANY_KEY,
  'GET /agent-integrations/:agentIntegrationId [workspace A]':        ROLE_IN_A,
  'PUT /agent-integrations/:agentIntegrationId':                      ORG_ADMINS,
  'PUT /agent-integrations/:agentIntegrationId [workspace A]':        ADMIN_OF_A,
  'DELETE /agent-integrations/:agentIntegrationId':                   ORG_ADMINS,
  'DELETE /agent-integrations/:agentIntegrationId [workspace A]':     ADMIN_OF_A,
  'GET /agent-integrations/:agentIntegrationId/workspaces':           ANY_KEY,
  'PUT /agent-integrations/:agentIntegrationId/workspaces':           ORG_ADMINS,
  'GET /agent-integrations/:agentIntegrationId/skills':               ANY_KEY,
  'PUT /agent-integrations/:agentIntegrationId/skills':               ORG_ADMINS,
  'PUT /agent-integrations/:agentIntegrationId/skills [workspace A]': ADMIN_OF_A,
  'DELETE /agent-integrations/:agentIntegrationId/skills/:skillId':  ORG_ADMINS,
  'DELETE /agent-integrations/:agentIntegrationId/skills/:skillId [workspace A]': ADMIN_OF_A,
  'GET /agent-servers':                                               ANY_KEY, // lists what the key sees
  'POST /agent-servers':                                              MANAGER_OF_A,
  'GET /agent-servers/:agentServerId':                                ROLE_IN_A,
  'PUT /agent-servers/:agentServerId':                                MANAGER_OF_A,
  'DELETE /agent-servers/:agentServerId':                             MANAGER_OF_A,
  'GET /agent-servers/:agentServerId/skills':                         ROLE_IN_A,
  'PUT /agent-servers/:agentServerId/skills':                         MANAGER_OF_A,
  'DELETE /agent-servers/:agentServerId/skills/:skillId':             MANAGER_OF_A,
  'GET /agent-servers/:agentServerId/user-access':                    ROLE_IN_A,
  'PUT /agent-servers/:agentServerId/user-access':                    MANAGER_OF_A,
  'DELETE /agent-servers/:agentServerId/user-access/:userId':         MANAGER_OF_A,
  'GET /agent-servers/:agentServerId/agent-card':                     ROLE_IN_A,
  // agents.invoke on workspace keys only (SPEC.md); the server is A's and the proxy acts in the caller's workspace.
  'POST /agent-servers/:agentServerId/a2a':                           'ok   ok   403  403  ok   404  ok   ok   ok   404',
  'POST /agent-servers/:agentServerId/sync':                          MANAGER_OF_A,
  // Connections are users' own: keys without a user (organisation and workspace service keys) have none to make.
  'GET /agent-servers/:agentServerId/connections':                    ROLE_IN_A,
  'POST /agent-servers/:agentServerId/connections':                   'ok   ok   403  403  403  404  ok   ok   ok   404',
  'DELETE /agent-servers/:agentServerId/connections':                 'ok   ok   ok   403  ok   404  ok   ok   ok   404', // member A's: by A, or by managers+

  // ---- rate-limit policies (docs/admin/policies.md): organisation owners and admins ----
  'POST /policies/rate-limits':                                       ORG_ADMINS,
  'GET /policies/rate-limits':                                        ORG_ADMINS,
  'GET /policies/rate-limits/:id':                                    ORG_ADMINS,
  'PUT /policies/rate-limits/:id':                                    ORG_ADMINS,
  'DELETE /policies/rate-limits/:id':                                 ORG_ADMINS,

  // ---- usage-limit policies (docs/admin/policies.md): organisation owners and admins ----
  'POST /policies/usage-limits':                                      ORG_ADMINS,
  'GET /policies/usage-limits':                                       ORG_ADMINS,
  'GET /policies/usage-limits/:id':                                   ORG_ADMINS,
  'PUT /policies/usage-limits/:id':                                   ORG_ADMINS,
  'DELETE /policies/usage-limits/:id':                                ORG_ADMINS,

  // ---- integrations (organisation level), providers and virtual keys of A, models (docs/admin/integrations.md;
  // managers write providers and virtual keys while managersWriteWsIntegrations is on, its default) ----
  'POST /integrations':                                               ORG_ADMINS,
  'GET /integrations':                                                ORG_ADMINS,
  'GET /integrations/:id':                                            ORG_ADMINS,
  'PUT /integrations/:id':                                            ORG_ADMINS,
  'DELETE /integrations/:id':                                         ORG_ADMINS,
  'GET /integrations/:id/workspaces':                                 ORG_ADMINS,
  'PUT /integrations/:id/workspaces':                                 ORG_ADMINS,
  'GET /integrations/:id/integration-models':                         ORG_ADMINS,
  'PUT /integrations/:id/integration-models':                         ORG_ADMINS,
  'POST /providers':                                                  MANAGER_OF_A,
  'GET /providers':                                                   ROLE_IN_A, // ?workspace_id=A
  'GET /providers/:id':                                               ROLE_IN_A,
  'PUT /providers/:id':                                               MANAGER_OF_A,
  'DELETE /providers/:id':                                            MANAGER_OF_A,
  'POST /virtual-keys':                                               MANAGER_OF_A,
  'GET /virtual-keys':                                                ROLE_IN_A, // ?workspace_id=A
  'GET /virtual-keys/:id':                                            ROLE_IN_A,
  'PUT /virtual-keys/:id':                                            MANAGER_OF_A,
  'DELETE /virtual-keys/:id':                                         MANAGER_OF_A,
  'GET /models':                                                      ROLE_IN_A, // ?workspace_id=A (SPEC.md: open to all workspace roles)
};

/** Why a row answers 404 to some callers (every row with a 404 cell has one). */
const NOTES: Record<string, string> = {
  'GET /workspaces/:workspaceId': 'A is invisible to B\'s service key and to B\'s member (no role in A)',
  'PUT /workspaces/:workspaceId': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId [archive, caller admin of it]': 'the workspace is invisible to the service keys of other workspaces',
  'GET /workspaces/:workspaceId/users': 'A is invisible without a role in A',
  'POST /workspaces/:workspaceId/users': 'A is invisible without a role in A',
  'POST /workspaces/:workspaceId/users [role admin]': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId/users/:userId': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId/users/:userId [target admin]': 'A is invisible without a role in A',
  'DELETE /workspaces/:workspaceId/users/:userId': 'A is invisible without a role in A',
  'DELETE /workspaces/:workspaceId/users/:userId [target admin]': 'A is invisible without a role in A',
  'GET /workspaces/:workspaceId/settings/security': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId/settings/security': 'A is invisible without a role in A',
  'GET /workspaces/:workspaceId/settings/api-keys': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId/settings/api-keys': 'A is invisible without a role in A',
  'GET /workspaces/:workspaceId/cache-settings': 'A is invisible without a role in A',
  'PUT /workspaces/:workspaceId/cache-settings': 'A is invisible without a role in A',
  'GET /logs/:logId': 'a log the caller may not see is "no such log" (docs/admin/settings.md)',
  'POST /logs/saved-filters': 'A is invisible without a role in A',
  'GET /logs/exports/:exportId': 'an export of another key is "no such export" to everyone but organisation admins',
  'GET /logs/exports/:exportId/download': 'an export of another key is "no such export" to everyone but organisation admins',
  'DELETE /logs/exports/:exportId': 'an export of another key is "no such export" to everyone but organisation admins',
  'GET /logs/saved-filters/:savedFilterId': 'a filter of a workspace the caller has no role in does not exist for them',
  'PUT /logs/saved-filters/:savedFilterId': 'a filter of a workspace the caller has no role in does not exist for them',
  'DELETE /logs/saved-filters/:savedFilterId': 'a filter of a workspace the caller has no role in does not exist for them',
  'POST /api-keys': 'A is invisible without a role in A',
  'POST /api-keys [workspace-user of member A]': 'A is invisible without a role in A',
  'POST /api-keys [workspace-user of the owner]': 'A is invisible without a role in A',
  'POST /api-keys [workspace-user of the organisation admin]': 'A is invisible without a role in A',
  'POST /api-keys/:apiKeyId/rotate [user key of the owner]': 'a key the caller may not see',
  'POST /api-keys/:apiKeyId/rotate [user key of the organisation admin]': 'a key the caller may not see',
  'GET /api-keys/:apiKeyId [user key of the owner]': 'a key the caller may not see',
  'PUT /api-keys/:apiKeyId [user key of the owner]': 'a key the caller may not see',
  'DELETE /api-keys/:apiKeyId [user key of the owner]': 'a key the caller may not see',
  'POST /api-keys/:apiKeyId/reveal [user key of the owner]': 'a key the caller may not see',
  'GET /api-keys/:apiKeyId': 'a key the caller may not manage (and is not its own) is "no such API key", as in the list',
  'GET /api-keys/:apiKeyId [user key of member A]': 'a key the caller may not manage (and is not its own) is "no such API key", as in the list',
  'GET /api-keys/:apiKeyId [organisation-service]': 'organisation-service keys are seen by organisation admins only',
  'PUT /api-keys/:apiKeyId': 'a key the caller may not see; its own key (member A) is a 403',
  'PUT /api-keys/:apiKeyId [user key of member A]': 'a key the caller may not see; its own key (member A) is a 403',
  'PUT /api-keys/:apiKeyId [organisation-service]': 'organisation-service keys are seen by organisation admins only',
  'DELETE /api-keys/:apiKeyId': 'a key the caller may not see',
  'DELETE /api-keys/:apiKeyId [user key of member A]': 'a key the caller may not see; its own key (member A) is a 403',
  'POST /api-keys/:apiKeyId/rotate': 'a key the caller may not see',
  'POST /api-keys/:apiKeyId/rotate [user key of member A]': 'a key the caller may not see',
  'POST /api-keys/:apiKeyId/rotate [organisation-service]': 'organisation-service keys are seen by organisation admins only',
  'POST /api-keys/:apiKeyId/reveal': 'a key the caller may not see',
  'POST /api-keys/:apiKeyId/reveal [user key of member A]': 'a key the caller may not see',
  'POST /configs': 'A is invisible without a role in A',
  'GET /configs/:configId': 'a config of a workspace where the caller has no role is as if absent',
  'GET /configs/:configId/versions': 'a config of a workspace where the caller has no role is as if absent',
  'PUT /configs/:configId': 'a config of a workspace where the caller has no role is as if absent',
  'POST /configs/:configId/validate': 'a config of a workspace where the caller has no role is as if absent',
  'DELETE /configs/:configId': 'a config of a workspace where the caller has no role is as if absent',
  'POST /model-aliases': 'A is invisible without a role in A',
  'GET /model-aliases/:aliasId': 'an alias of a workspace where the caller has no role is as if absent',
  'PUT /model-aliases/:aliasId': 'an alias of a workspace where the caller has no role is as if absent',
  'DELETE /model-aliases/:aliasId': 'an alias of a workspace where the caller has no role is as if absent',
  'POST /prompts': 'A is invisible without a role in A',
  'GET /prompts/:promptId': 'a prompt of a workspace where the caller has no role is as if absent',
  'GET /prompts/:promptId/versions': 'a prompt of a workspace where the caller has no role is as if absent',
  'GET /prompts/:promptId/versions/:version': 'a prompt of a workspace where the caller has no role is as if absent',
  'PUT /prompts/:promptId': 'a prompt of a workspace where the caller has no role is as if absent',
  'PUT /prompts/:promptId/makeDefault': 'a prompt of a workspace where the caller has no role is as if absent',
  'DELETE /prompts/:promptId': 'a prompt of a workspace where the caller has no role is as if absent',
  'POST /prompts/partials': 'A is invisible without a role in A',
  'GET /prompts/partials/:partialId': 'a partial of a workspace where the caller has no role is as if absent',
  'GET /prompts/partials/:partialId/versions': 'a partial of a workspace where the caller has no role is as if absent',
  'PUT /prompts/partials/:partialId': 'a partial of a workspace where the caller has no role is as if absent',
  'PUT /prompts/partials/:partialId/makeDefault': 'a partial of a workspace where the caller has no role is as if absent',
  'DELETE /prompts/partials/:partialId': 'a partial of a workspace where the caller has no role is as if absent',
  'POST /guardrails': 'A is invisible without a role in A',
  'GET /guardrails/:guardrailId': 'a guardrail of a workspace where the caller has no role is as if absent',
  'PUT /guardrails/:guardrailId': 'a guardrail of a workspace where the caller has no role is as if absent',
  'DELETE /guardrails/:guardrailId': 'a guardrail of a workspace where the caller has no role is as if absent',
  'POST /mcp-integrations': 'A is invisible without a role in A',
  'GET /mcp-integrations/:mcpIntegrationId': 'an MCP integration of a workspace where the caller has no role is as if absent',
  'PUT /mcp-integrations/:mcpIntegrationId': 'an MCP integration of a workspace where the caller has no role is as if absent',
  'DELETE /mcp-integrations/:mcpIntegrationId': 'an MCP integration of a workspace where the caller has no role is as if absent',
  'POST /mcp-servers': 'A is invisible without a role in A',
  'GET /mcp-servers/:mcpServerId': 'an MCP server of a workspace where the caller has no role is as if absent',
  'GET /mcp-servers/:mcpServerId/metadata': 'an MCP server of a workspace where the caller has no role is as if absent',
  'POST /mcp-servers/:mcpServerId/sync': 'an MCP server of a workspace where the caller has no role is as if absent',
  'GET /mcp-servers/:mcpServerId/connections': 'an MCP server of a workspace where the caller has no role is as if absent',
  'POST /mcp-servers/:mcpServerId/connections': 'an MCP server of a workspace where the caller has no role is as if absent',
  'DELETE /mcp-servers/:mcpServerId/connections': 'an MCP server of a workspace where the caller has no role is as if absent',
  'POST /mcp-servers/:mcpServerId/connections/authorize': 'an MCP server of a workspace where the caller has no role is as if absent',
  'PUT /mcp-servers/:mcpServerId': 'an MCP server of a workspace where the caller has no role is as if absent',
  'DELETE /mcp-servers/:mcpServerId': 'an MCP server of a workspace where the caller has no role is as if absent',
  'POST /mcp/:slug': 'the slug names a server of the caller\'s workspace: B\'s keys and the organisation key (default workspace) have none',
  'GET /mcp/:slug': 'the slug names a server of the caller\'s workspace: B\'s keys and the organisation key (default workspace) have none',
  'DELETE /mcp/:slug': 'DELETE ends the session its Mcp-Session-Id names; the matrix sends none (tests/mcp ends real sessions)',
  'POST /agent-integrations [workspace A]': 'A is invisible without a role in A',
  'GET /agent-integrations/:agentIntegrationId [workspace A]': 'an agent integration of a workspace where the caller has no role is as if absent',
  'PUT /agent-integrations/:agentIntegrationId [workspace A]': 'an agent integration of a workspace where the caller has no role is as if absent',
  'DELETE /agent-integrations/:agentIntegrationId [workspace A]': 'an agent integration of a workspace where the caller has no role is as if absent',
  'PUT /agent-integrations/:agentIntegrationId/skills [workspace A]': 'an agent integration of a workspace where the caller has no role is as if absent',
  'POST /agent-servers': 'A is invisible without a role in A',
  'GET /agent-servers/:agentServerId': 'an agent server of a workspace where the caller has no role is as if absent',
  'PUT /agent-servers/:agentServerId': 'an agent server of a workspace where the caller has no role is as if absent',
  'DELETE /agent-servers/:agentServerId': 'an agent server of a workspace where the caller has no role is as if absent',
  'GET /agent-servers/:agentServerId/skills': 'an agent server of a workspace where the caller has no role is as if absent',
  'PUT /agent-servers/:agentServerId/skills': 'an agent server of a workspace where the caller has no role is as if absent',
  'GET /agent-servers/:agentServerId/user-access': 'an agent server of a workspace where the caller has no role is as if absent',
  'PUT /agent-servers/:agentServerId/user-access': 'an agent server of a workspace where the caller has no role is as if absent',
  'DELETE /agent-servers/:agentServerId/skills/:skillId': 'an agent server of a workspace where the caller has no role is as if absent',
  'DELETE /agent-servers/:agentServerId/user-access/:userId': 'an agent server of a workspace where the caller has no role is as if absent',
  'DELETE /agent-integrations/:agentIntegrationId/skills/:skillId [workspace A]': 'an agent integration of a workspace where the caller has no role is as if absent',
  'GET /agent-servers/:agentServerId/agent-card': 'an agent server of a workspace where the caller has no role is as if absent',
  'POST /agent-servers/:agentServerId/a2a': 'the proxy looks the server up in the caller\'s workspace: B\'s keys have none there',
  'POST /agent-servers/:agentServerId/sync': 'an agent server of a workspace where the caller has no role is as if absent',
  'GET /agent-servers/:agentServerId/connections': 'an agent server of a workspace where the caller has no role is as if absent',
  'POST /agent-servers/:agentServerId/connections': 'an agent server of a workspace where the caller has no role is as if absent',
  'DELETE /agent-servers/:agentServerId/connections': 'an agent server of a workspace where the caller has no role is as if absent',
  'POST /providers': 'A is invisible without a role in A',
  'GET /providers': 'A is invisible without a role in A',
  'GET /providers/:id': 'a provider of a workspace where the caller has no role is as if absent',
  'PUT /providers/:id': 'a provider of a workspace where the caller has no role is as if absent',
  'DELETE /providers/:id': 'a provider of a workspace where the caller has no role is as if absent',
  'POST /virtual-keys': 'A is invisible without a role in A',
  'GET /virtual-keys': 'A is invisible without a role in A',
  'GET /virtual-keys/:id': 'a virtual key of a workspace where the caller has no role is as if absent',
  'PUT /virtual-keys/:id': 'a virtual key of a workspace where the caller has no role is as if absent',
  'DELETE /virtual-keys/:id': 'a virtual key of a workspace where the caller has no role is as if absent',
  'GET /models': 'A is invisible without a role in A',
};

export interface MatrixRow {
  /** `METHOD path [variant]`. */
  key: string;
  /** `METHOD path`, as registered. */
  route: string;
  method: string;
  path: string;
  expect: Readonly<Record<PrincipalName, Outcome>>;
  note: string | undefined;
}

function parseCells(key: string, cells: string): Record<PrincipalName, Outcome> {
  const parts = cells.trim().split(/\s+/);
  if (parts.length !== PRINCIPALS.length)
    throw new Error(`${key}: ${parts.length} cells for ${PRINCIPALS.length} principals (${PRINCIPALS.map((p) => COLUMNS[p]).join(' ')})`);
  const out = {} as Record<PrincipalName, Outcome>;
  PRINCIPALS.forEach((who, i) => {
    const cell = parts[i];
    if (cell === 'ok') out[who] = 'ok';
    else if (cell === '403') out[who] = 403;
    else if (cell === '404') out[who] = 404;
    else throw new Error(`${key}: cell ${COLUMNS[who]} is ${JSON.stringify(cell)}, not ok, 403 or 404`);
  });
  return out;
}

export const MATRIX: readonly MatrixRow[] = Object.entries(TABLE).map(([key, cells]) => {
  const match = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)(?: \[[^\]]+\])?$/.exec(key);
  if (!match) throw new Error(`not a row key: ${key}`);
  const [, method = '', path = ''] = match;
  const expect = parseCells(key, cells);
  const note = NOTES[key];
  if (Object.values(expect).includes(404) && !note) throw new Error(`${key} expects a 404: say why in NOTES`);
  return { key, route: `${method} ${path}`, method, path, expect, note };
});

for (const key of Object.keys(NOTES)) if (!(key in TABLE)) throw new Error(`NOTES names ${key}, which is not in the table`);

/** SCIM routes authenticate by the organisation's SCIM token (an organisation-service key with scim.write): tests/scim. */
const SCIM_TOKEN = 'SCIM 2.0: the SCIM bearer token is the credential (docs/admin/scim.md)';

/**
 * Routes reached without an API key (route.public): the handler authenticates the request itself, so no role applies.
 * Listed here so that a route cannot become public unnoticed.
 */
export const PUBLIC_ROUTES: Readonly<Record<string, string>> = {
  'POST /users/invites/accept': 'accepting an invitation: the token is the credential (docs/admin/identity.md)',
  'GET /sso/login': 'SSO: starts a sign-in for an e-mail address; the identity provider authenticates (docs/admin/sso.md)',
  'GET /mcp/oauth/callback': 'MCP OAuth: the authorization server\'s redirect; the one-use state and the PKCE verifier are the credentials (docs/admin/mcp.md)',
  'GET /sso/callback': 'SSO: the identity provider\'s redirect; state, PKCE and the ID token are the credentials',
  'POST /sso/logout': 'SSO: ends the session of the cookie it carries',
  'GET /sso/status': 'SSO: whether the deployment offers SSO sign-in (SSO_CALLBACK_URL set); no data of any organisation',
  'GET /scim/v2/ServiceProviderConfig': SCIM_TOKEN,
  'GET /scim/v2/ResourceTypes': SCIM_TOKEN,
  'GET /scim/v2/Schemas': SCIM_TOKEN,
  'GET /scim/v2/Users': SCIM_TOKEN,
  'POST /scim/v2/Users': SCIM_TOKEN,
  'GET /scim/v2/Users/:id': SCIM_TOKEN,
  'PUT /scim/v2/Users/:id': SCIM_TOKEN,
  'PATCH /scim/v2/Users/:id': SCIM_TOKEN,
  'DELETE /scim/v2/Users/:id': SCIM_TOKEN,
  'GET /scim/v2/Groups': SCIM_TOKEN,
  'POST /scim/v2/Groups': SCIM_TOKEN,
  'GET /scim/v2/Groups/:id': SCIM_TOKEN,
  'PUT /scim/v2/Groups/:id': SCIM_TOKEN,
  'PATCH /scim/v2/Groups/:id': SCIM_TOKEN,
  'DELETE /scim/v2/Groups/:id': SCIM_TOKEN,
};
