/**
 * Keys that follow memberships (SPEC.md "API keys"): a member who joins a workspace gets a default workspace-user
 * key when `user_api_key_auto_create` is on there (expiry from `user_api_key_ttl`, rotation from the enforced
 * period), handed back to the emitter to show once; a member who leaves loses their workspace-user keys.
 */
import type { AdminEvents, AdminEventResults, OrganisationSettingsService } from '@gateway/admin-kit';
import { and, eq, type Database, type Logger, MODEL_CALL_SCOPES } from '@gateway/sdk';
import type { ApiKeyClock } from './clock.ts';
import { resolvePolicy } from './policy.ts';
import type { ApiKeyStore } from './store.ts';
import { apiKeys } from './tables.ts';

/** What an auto-created key may do: every model call, read its own key, pick up its rotated secret. */
export const AUTO_CREATED_KEY_SCOPES: readonly string[] = [...MODEL_CALL_SCOPES, 'api_keys.read', 'workspace_user_api_keys.rotate'];

export interface MemberKeyDeps {
  database: Database;
  keys: ApiKeyStore;
  clock: ApiKeyClock;
  settings: () => OrganisationSettingsService | undefined;
  logger: Logger;
}

export function followMemberships(events: AdminEvents, deps: MemberKeyDeps): void {
  events.on('member.added', async (event): Promise<AdminEventResults['member.added'] | undefined> => {
    const settings = deps.settings();
    if (!settings) return undefined;
    const keySettings = await settings.keySettings(event.organisationId, event.workspaceId);
    if (!keySettings.user_api_key_auto_create) return undefined;
    // One default key per member and workspace: a member added again keeps the key they have.
    const existing = await deps.database.count(
      apiKeys,
      (c) => and(eq(c.workspace_id, event.workspaceId), eq(c.user_id, event.userId), eq(c.type, 'workspace-user')),
      { fresh: true },
    );
    if (existing > 0) return undefined;
    const now = deps.clock.now();
    const policy = resolvePolicy(undefined, { now, enforced: keySettings.user_api_key_rotation_period });
    const { row, secret } = await deps.keys.create({
      organisation_id: event.organisationId,
      workspace_id: event.workspaceId,
      user_id: event.userId,
      name: 'Default key',
      description: `Created when the user joined the workspace (${event.via})`,
      type: 'workspace-user',
      scopes: [...AUTO_CREATED_KEY_SCOPES],
      expires_at: keySettings.user_api_key_ttl === null ? null : now + keySettings.user_api_key_ttl * 1000,
      ...policy,
    });
    deps.logger.info({ apiKeyId: row.id, workspaceId: row.workspace_id, userId: row.user_id }, 'created the default API key of a new workspace member');
    return { api_key: { id: row.id, key: secret, workspace_id: event.workspaceId } };
  });

  events.on('member.removed', async (event) => {
    const removed = await deps.keys.removeUserKeys(event.organisationId, event.userId, event.workspaceId);
    if (removed.length) deps.logger.info({ userId: event.userId, workspaceId: event.workspaceId, apiKeyIds: removed }, 'deleted the API keys of a removed member');
  });
}
