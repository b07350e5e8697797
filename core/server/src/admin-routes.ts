/**
 * Administration routes: authenticate, check what the route declares (feature flag, key type, scope, organisation
 * role), run the handler, and write the audit entry of a successful change. Handlers check the rest (workspace
 * roles, security settings), through the Principal.
 */
import {
  type AdminAuthorizer,
  type AdminRequest,
  type AdminRoute,
  ALL_SCOPES,
  type AuditEntry,
  type PublicAdminRequest,
  type PublicAdminRoute,
  type AuditSink,
  type Caller,
  Errors,
  type Logger,
  type Principal,
  roleAtLeast,
} from '@gateway/sdk';
import { readBody } from './body.ts';
import type { Settings } from './env.ts';
import { sessionSecret } from './admin-auth.ts';
import { type Authenticator, authenticate, gatewaySecret } from './gateway-handler.ts';

export interface AdminDeps {
  authenticator: Authenticator | undefined;
  authorizer: AdminAuthorizer | undefined;
  audit: AuditSink | undefined;
  settings: Settings;
  logger: Logger;
}

/** Without the identity plugin's authorizer: an organisation-service key is an admin, other keys have no role. */
function fallbackPrincipal(caller: Caller): Principal {
  const orgAdmin = caller.keyType === 'organisation-service';
  return {
    caller,
    orgRole: orgAdmin ? 'admin' : null,
    isOrgAdmin: orgAdmin,
    workspaceRole: async (workspaceId) => (orgAdmin || workspaceId === caller.workspaceId ? 'admin' : null),
  };
}

export function hasScope(scopes: readonly string[], needed: string | readonly string[]): boolean {
  if (scopes.includes(ALL_SCOPES)) return true;
  return typeof needed === 'string' ? scopes.includes(needed) : needed.some((s) => scopes.includes(s));
}

const AUDITED_BY_DEFAULT = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ACTION: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

const decoder = new TextDecoder();

/**
 * The JSON body of an administration call, refused with 413 past the admin limit before it is held whole (a declared
 * length at once, a chunked body as soon as the bytes counted pass it): the public invite-accept route included.
 */
async function readJson(request: Request, limit: number): Promise<unknown> {
  if (request.method === 'GET' || request.method === 'DELETE') {
    // A DELETE may carry a body (who to disconnect); read it only when one is announced.
    if (request.method === 'GET' || !request.headers.get('content-length')) return undefined;
  }
  const bytes = await readBody(request, limit);
  const text = bytes ? decoder.decode(bytes) : '';
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw Errors.malformedJson('The request body is not valid JSON');
  }
}

async function writeAudit(deps: AdminDeps, entry: AuditEntry): Promise<void> {
  if (!deps.audit || !deps.settings.features.auditLogs) return;
  try {
    await deps.audit.record(entry);
  } catch (error) {
    // The change is made; a lost audit entry is logged loudly rather than turning the answer into an error.
    deps.logger.error({ err: error, path: entry.path }, 'could not write the audit log entry');
  }
}

function publicHandler(route: PublicAdminRoute, deps: AdminDeps) {
  return async (request: Request, params: Record<string, string>): Promise<Response> => {
    if (!deps.settings.features.apiAccess) throw Errors.featureDisabled('The administration API (API_ACCESS_ENABLED)');
    if (route.feature && !deps.settings.features[route.feature]) throw Errors.featureDisabled(route.feature);
    const url = new URL(request.url);
    const req: PublicAdminRequest = { params, query: url.searchParams, body: await readJson(request, deps.settings.adminMaxBodyBytes), headers: request.headers, audit: {} };
    const response = await route.handle(req);
    const { organisationId, ...record } = req.audit;
    if (organisationId && response.status < 400 && (route.audit ?? AUDITED_BY_DEFAULT.has(route.method)))
      await writeAudit(deps, {
        ...record,
        action: record.action ?? ACTION[route.method] ?? route.method.toLowerCase(),
        organisationId,
        actor: null,
        method: route.method,
        path: url.pathname,
        status: response.status,
        at: Date.now(),
      });
    return response;
  };
}

/** The handler of one administration route. */
export function adminHandler(route: AdminRoute, deps: AdminDeps): (request: Request, params: Record<string, string>) => Promise<Response> {
  if (route.public) return publicHandler(route, deps);
  return async (request: Request, params: Record<string, string>): Promise<Response> => {
    if (!deps.settings.features.apiAccess) throw Errors.featureDisabled('The administration API (API_ACCESS_ENABLED)');
    // A key header wins; without one, an SSO session's cookie (admin-auth.ts).
    const secret =
      gatewaySecret(request.headers.get('x-gateway-api-key'), request.headers.get('authorization'), request.headers.get('x-api-key')) ??
      sessionSecret(request.headers.get('cookie'));
    const caller = await authenticate(secret, deps.authenticator);
    if (route.feature && !deps.settings.features[route.feature]) throw Errors.featureDisabled(route.feature);
    if (route.keyTypes && !route.keyTypes.includes(caller.keyType))
      throw Errors.forbidden(`This route is not open to ${caller.keyType} keys`);
    if (!hasScope(caller.scopes, route.scope))
      throw Errors.forbidden(`This route needs the ${typeof route.scope === 'string' ? route.scope : route.scope.join(' or ')} scope`);
    const principal = deps.authorizer ? await deps.authorizer.principal(caller) : fallbackPrincipal(caller);
    if (route.role && !roleAtLeast(principal.orgRole, route.role)) throw Errors.forbidden(`This route needs the organisation ${route.role} role`);
    const url = new URL(request.url);
    const req: AdminRequest = {
      caller,
      principal,
      params,
      query: url.searchParams,
      body: await readJson(request, deps.settings.adminMaxBodyBytes),
      headers: request.headers,
      signal: request.signal,
      audit: {},
    };
    const response = await route.handle(req);
    if (response.status < 400 && (route.audit ?? AUDITED_BY_DEFAULT.has(route.method)))
      await writeAudit(deps, {
        ...req.audit,
        action: req.audit.action ?? ACTION[route.method] ?? route.method.toLowerCase(),
        organisationId: caller.organisationId,
        actor: { apiKeyId: caller.apiKeyId, userId: caller.userId, keyType: caller.keyType },
        method: route.method,
        path: url.pathname,
        status: response.status,
        at: Date.now(),
      });
    return response;
  };
}
