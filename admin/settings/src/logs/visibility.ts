/**
 * Which request logs a principal may see, as SPEC.md's security settings say (reused by every route over
 * `request_logs`: the log list, a log, analytics):
 *
 * - organisation owners: every log of the organisation;
 * - organisation admins (and organisation-service keys, which act as admins): the logs of each workspace whose
 *   effective `organisationAdminsViewLogs` is on (logs without a workspace follow the organisation's value), and
 *   their metadata only where `organisationAdminsViewLogMetadata` is on;
 * - everyone else, per workspace they have a role in: workspace admins every log; managers and members every log
 *   when `managersViewAllData` / `membersViewAllData` is on for that workspace (the `data_visibility` override
 *   applied), otherwise none but their own;
 * - a user always sees the logs of their own keys (the workspace-user keys of their user).
 */
import { apiKeys } from '@gateway/admin-api-keys';
import type { SecuritySettings, SecuritySettingsService } from '@gateway/admin-kit';
import { workspaceMembers, workspaces } from '@gateway/admin-identity';
import type { requestLogs } from '@gateway/plugin-request-log';
import { and, type Columns, type Database, eq, inArray, isNull, not, or, type Principal, type SQL, sql } from '@gateway/sdk';

export type LogColumns = Columns<(typeof requestLogs)['columns']>;

export interface LogVisibility {
  /** The condition over request_logs: the organisation's logs the principal may see. */
  where(columns: LogColumns): SQL;
  /** Whether the `metadata` of a visible log may be shown. */
  metadataVisible(log: { workspace_id: string | null; api_key_id: string | null }): boolean;
  /** True when no log at all is visible (a route may skip its query). */
  readonly none: boolean;
}

export interface LogVisibilityDeps {
  /** What is read: workspaces, memberships and the user's keys. */
  database: Pick<Database, 'select'>;
  /** Service `securitySettings`. */
  security: SecuritySettingsService;
}

const NOTHING = sql`1 = 0`;

/** The visible logs of `principal` within its organisation. */
export async function visibleLogFilter(principal: Principal, deps: LogVisibilityDeps): Promise<LogVisibility> {
  const organisationId = principal.caller.organisationId;
  const inOrganisation = (c: LogColumns) => eq(c.organisation_id, organisationId);

  if (principal.orgRole === 'owner')
    return { where: inOrganisation, metadataVisible: () => true, none: false };

  const ownKeys = await ownKeyIds(principal, deps.database);
  const own = new Set(ownKeys);
  const ownLogs = (c: LogColumns): SQL | undefined => (ownKeys.length ? inArray(c.api_key_id, ownKeys) : undefined);

  if (principal.isOrgAdmin) {
    const organisation = await deps.security.get(organisationId, null);
    const rows = await deps.database.select(workspaces, { where: (c) => eq(c.organisation_id, organisationId) });
    const settings = new Map<string, SecuritySettings>();
    await Promise.all(rows.map(async (w) => settings.set(w.id, await deps.security.get(organisationId, w.id))));
    // The workspaces whose value differs from the organisation's (usually none, so the condition stays short).
    const exceptions = rows.filter((w) => settings.get(w.id)!.organisationAdminsViewLogs !== organisation.organisationAdminsViewLogs).map((w) => w.id);
    const byWorkspace = (c: LogColumns): SQL | undefined => {
      if (organisation.organisationAdminsViewLogs)
        return exceptions.length ? or(isNull(c.workspace_id), not(inArray(c.workspace_id, exceptions))) : sql`1 = 1`;
      return exceptions.length ? inArray(c.workspace_id, exceptions) : undefined;
    };
    const of = (workspaceId: string | null) => (workspaceId !== null && settings.get(workspaceId)) || organisation;
    const none = !organisation.organisationAdminsViewLogs && exceptions.length === 0 && ownKeys.length === 0;
    return {
      where: (c) => and(inOrganisation(c), or(byWorkspace(c), ownLogs(c)) ?? NOTHING)!,
      metadataVisible: (log) => (log.api_key_id !== null && own.has(log.api_key_id)) || of(log.workspace_id).organisationAdminsViewLogMetadata,
      none,
    };
  }

  // Members, managers, workspace admins and workspace-service keys: per workspace they have a role in.
  const candidates = new Set<string>([principal.caller.workspaceId].filter(Boolean));
  if (principal.caller.userId) {
    const memberships = await deps.database.select(workspaceMembers, {
      where: (c) => and(eq(c.organisation_id, organisationId), eq(c.user_id, principal.caller.userId!)),
    });
    for (const m of memberships) candidates.add(m.workspace_id);
  }
  const seeAll: string[] = [];
  await Promise.all(
    [...candidates].map(async (workspaceId) => {
      const role = await principal.workspaceRole(workspaceId);
      if (!role) return;
      if (role === 'admin' || role === 'owner') return void seeAll.push(workspaceId);
      const settings = await deps.security.get(organisationId, workspaceId);
      if (role === 'manager' ? settings.managersViewAllData : settings.membersViewAllData) seeAll.push(workspaceId);
    }),
  );
  return {
    where: (c) => and(inOrganisation(c), or(seeAll.length ? inArray(c.workspace_id, seeAll) : undefined, ownLogs(c)) ?? NOTHING)!,
    metadataVisible: () => true,
    none: seeAll.length === 0 && ownKeys.length === 0,
  };
}

/** The ids of the caller's user's keys (revoked ones too: their logs stay theirs). */
async function ownKeyIds(principal: Principal, database: Pick<Database, 'select'>): Promise<string[]> {
  const userId = principal.caller.userId;
  if (!userId) return [];
  const keys = await database.select(apiKeys, {
    where: (c) => and(eq(c.organisation_id, principal.caller.organisationId), eq(c.user_id, userId)),
  });
  return keys.map((k) => k.id);
}
