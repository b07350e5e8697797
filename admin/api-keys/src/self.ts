/**
 * GET /api-keys/self: what the calling key is and may do — its type, scopes, workspace and the roles it acts with —
 * so a client (the web console, docs/console.md) shows and fetches only what the key may reach. The key's own
 * record (name, status, expiry) as any key sees it, without its secret; those fields are null for a caller with no
 * key row.
 */
import { json } from '@gateway/admin-kit';
import type { AdminRequest } from '@gateway/sdk';
import type { RouteDeps } from './routes.ts';
import { view } from './view.ts';

export async function selfView(deps: Pick<RouteDeps, 'keys' | 'clock'>, req: AdminRequest): Promise<Response> {
  const { caller, principal } = req;
  // No key row: a caller that is not an API key (an SSO session, docs/admin/sso.md), or a key deleted a moment ago.
  const key = await deps.keys.get(caller.organisationId, caller.apiKeyId);
  const shown = key ? view(key, deps.clock.now()) : undefined;
  return json({
    object: 'api_key_self',
    id: caller.apiKeyId,
    name: shown?.name ?? null,
    type: caller.keyType,
    organisation_id: caller.organisationId,
    workspace_id: caller.workspaceId,
    user_id: caller.userId,
    scopes: caller.scopes,
    organisation_role: principal.orgRole,
    workspace_role: await principal.workspaceRole(caller.workspaceId),
    status: shown?.status ?? null,
    expires_at: shown?.expires_at ?? null,
    key_transition_expires_at: shown?.key_transition_expires_at ?? null,
  });
}
