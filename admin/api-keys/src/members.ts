/**
 * Keys that follow memberships (SPEC.md "API keys"): a member who joins a workspace gets a default workspace-user
 * key when `user_api_key_auto_create` is on there (expiry from `user_api_key_ttl`, rotation from the enforced
 * period); a member who leaves loses their workspace-user keys.
 *
 * The secret of a default key is its member's alone: it is handed back to the emitter (to be shown once) only when
 * the answer goes to the member themselves (an invitation they accept, a workspace they join on their own call).
 * Otherwise it is sealed in the key's row for the member to pick up once with POST /api-keys/:id/reveal, and they
 * are told by e-mail (without the secret) when SMTP is set up: whoever added them never sees it.
 */
import type { AdminEvents, AdminEventResults, OrganisationSettingsService } from '@gateway/admin-kit';
import { and, eq, type Database, type Logger, MODEL_CALL_SCOPES } from '@gateway/sdk';
import type { ApiKeyClock } from './clock.ts';
import type { KeyNotices } from './notices.ts';
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
  notices: KeyNotices;
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
    const toMember = event.callerUserId === event.userId;
    const { row, secret } = await deps.keys.create(
      {
        organisation_id: event.organisationId,
        workspace_id: event.workspaceId,
        user_id: event.userId,
        name: 'Default key',
        description: `Created when the user joined the workspace (${event.via})`,
        type: 'workspace-user',
        scopes: [...AUTO_CREATED_KEY_SCOPES],
        expires_at: keySettings.user_api_key_ttl === null ? null : now + keySettings.user_api_key_ttl * 1000,
        ...policy,
      },
      { forPickup: !toMember },
    );
    deps.logger.info({ apiKeyId: row.id, workspaceId: row.workspace_id, userId: row.user_id, waitsForPickup: !toMember }, 'created the default API key of a new workspace member');
    const issued = { id: row.id, workspace_id: event.workspaceId, user_id: event.userId };
    if (toMember) return { api_key: { ...issued, pending_secret: false, key: secret } };
    deps.notices.inBackground(() => deps.notices.waitingForPickup(row));
    return { api_key: { ...issued, pending_secret: true } };
  });

  events.on('member.removed', async (event) => {
    const removed = await deps.keys.removeUserKeys(event.organisationId, event.userId, event.workspaceId);
    if (removed.length) deps.logger.info({ userId: event.userId, workspaceId: event.workspaceId, apiKeyIds: removed }, 'deleted the API keys of a removed member');
  });
}
