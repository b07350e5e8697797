/**
 * Unit-test support for the saved-guardrail and saved-config routes: a principal with chosen roles (what the
 * identity plugin's authorizer would give), and an AdminRequest to hand to a route's handler directly.
 */
import type { AdminRequest, AdminRoute, ApiKeyType, Caller, Principal, Role } from '@gateway/sdk';

export function testCaller(o: { organisationId: string; workspaceId: string; keyType?: ApiKeyType; userId?: string | null }): Caller {
  return {
    apiKeyId: crypto.randomUUID(),
    organisationId: o.organisationId,
    workspaceId: o.workspaceId,
    scopes: ['*'],
    keyType: o.keyType ?? 'workspace-user',
    userId: o.userId === undefined ? crypto.randomUUID() : o.userId,
  };
}

/** Roles by workspace id; `orgAdmin` makes the caller an organisation admin (admin of every workspace). */
export function testPrincipal(caller: Caller, roles: Record<string, Role>, orgAdmin = false): Principal {
  return {
    caller,
    orgRole: orgAdmin ? 'admin' : 'member',
    isOrgAdmin: orgAdmin,
    workspaceRole: async (workspaceId) => (orgAdmin ? 'admin' : (roles[workspaceId] ?? null)),
  };
}

export function adminRequest(principal: Principal, o: { params?: Record<string, string>; query?: string; body?: unknown } = {}): AdminRequest {
  return {
    caller: principal.caller,
    principal,
    params: o.params ?? {},
    query: new URLSearchParams(o.query ?? ''),
    body: o.body,
    headers: new Headers(),
    audit: {},
  };
}

/** The route of `method path` among `routes`. */
export function routeOf(routes: readonly AdminRoute[], method: AdminRoute['method'], path: string): AdminRoute {
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  return route;
}

/** The status a handler answers with, a thrown GatewayError counting as its status. */
export async function statusOf(route: AdminRoute, req: AdminRequest): Promise<number> {
  if (route.public) throw new Error('a public route');
  try {
    return (await route.handle(req)).status;
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number') return status;
    throw error;
  }
}
