// visibleLogFilter on both dialects: which request_logs rows each kind of principal sees as the security settings
// (organisation values and workspace overrides) change, and when metadata is withheld.
import { describe, expect, test } from 'bun:test';
import { apiKeyMigrations, apiKeys } from '@gateway/admin-api-keys';
import { identityMigrations, users, workspaceMembers, workspaces } from '@gateway/admin-identity';
import { requestLogMigrations, requestLogs } from '@gateway/plugin-request-log';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import type { ApiKeyType, Caller, Database, Principal, Role } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import { SettingsStore } from '../store.ts';
import { settingsMigrations } from '../tables.ts';
import { visibleLogFilter } from './visibility.ts';

const ORG = 'org-vis';
const OTHER_ORG = 'org-other';

function principal(keyType: ApiKeyType, opts: { apiKeyId: string; workspaceId: string; userId?: string; orgRole: Role | null; roles?: Record<string, Role> }): Principal {
  const caller: Caller = { apiKeyId: opts.apiKeyId, organisationId: ORG, workspaceId: opts.workspaceId, scopes: ['logs.read'], keyType, userId: opts.userId ?? null };
  const isOrgAdmin = opts.orgRole === 'owner' || opts.orgRole === 'admin';
  return { caller, orgRole: opts.orgRole, isOrgAdmin, workspaceRole: async (ws) => (isOrgAdmin ? 'admin' : (opts.roles?.[ws] ?? null)) };
}

async function seed(database: Database) {
  await database.migrate([...identityMigrations, ...apiKeyMigrations, ...requestLogMigrations, ...settingsMigrations]);
  await database.insert(workspaces, [
    { id: 'w1', organisation_id: ORG, name: 'One', slug: 'one' },
    { id: 'w2', organisation_id: ORG, name: 'Two', slug: 'two' },
    { id: 'w3', organisation_id: OTHER_ORG, name: 'Three', slug: 'three' },
  ]);
  await database.insert(users, [
    { id: 'u-owner', organisation_id: ORG, email: 'owner@x.test', role: 'owner' },
    { id: 'u-admin', organisation_id: ORG, email: 'admin@x.test', role: 'admin' },
    { id: 'u-mem', organisation_id: ORG, email: 'mem@x.test', role: 'member' },
    { id: 'u-other', organisation_id: ORG, email: 'other@x.test', role: 'member' },
  ]);
  await database.insert(workspaceMembers, [
    { organisation_id: ORG, workspace_id: 'w1', user_id: 'u-mem', role: 'member' },
    { organisation_id: ORG, workspace_id: 'w2', user_id: 'u-mem', role: 'manager' },
    { organisation_id: ORG, workspace_id: 'w1', user_id: 'u-other', role: 'member' },
    { organisation_id: ORG, workspace_id: 'w2', user_id: 'u-other', role: 'member' },
  ]);
  const key = (id: string, type: ApiKeyType, workspaceId: string | null, userId: string | null) => ({
    id,
    organisation_id: ORG,
    workspace_id: workspaceId,
    user_id: userId,
    name: id,
    type,
    hash: id.padEnd(64, '0'),
    prefix_hint: 'x',
    scopes: ['completions.write'],
  });
  await database.insert(apiKeys, [
    key('k-mem-1', 'workspace-user', 'w1', 'u-mem'),
    key('k-mem-2', 'workspace-user', 'w2', 'u-mem'),
    key('k-other-1', 'workspace-user', 'w1', 'u-other'),
    key('k-other-2', 'workspace-user', 'w2', 'u-other'),
    key('k-svc-1', 'workspace-service', 'w1', null),
    key('k-org', 'organisation-service', null, null),
  ]);
  const log = (id: string, organisationId: string, workspaceId: string | null, apiKeyId: string) => ({
    id,
    trace_id: id,
    organisation_id: organisationId,
    workspace_id: workspaceId,
    api_key_id: apiKeyId,
    endpoint: 'chatComplete',
    method: 'POST',
    path: '/chat/completions',
    status: 200,
    latency_ms: 1,
    metadata: { team: id },
    created_at: Date.now(),
  });
  await database.insert(requestLogs, [
    log('L1', ORG, 'w1', 'k-mem-1'),
    log('L2', ORG, 'w1', 'k-other-1'),
    log('L3', ORG, 'w2', 'k-other-2'),
    log('L4', ORG, 'w2', 'k-mem-2'),
    log('L5', ORG, null, 'k-org'),
    log('L6', OTHER_ORG, 'w3', 'k-elsewhere'),
  ]);
}

for (const dialect of DIALECTS) {
  describe(`visibleLogFilter [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      await seed(database);
      const state = new MemoryStateStore();
      const store = new SettingsStore(database, state);
      store.start();
      const seen = async (p: Principal) => {
        const visible = await visibleLogFilter(p, { database, security: store });
        const rows = await database.select(requestLogs, { where: (c) => visible.where(c), orderBy: (c) => c.id });
        return { ids: rows.map((r) => r.id), visible, rows };
      };
      const set = (workspaceId: string | null, values: Record<string, boolean>) => store.write(ORG, 'security', workspaceId, { set: values, remove: [] });
      return { database, store, seen, set, close: () => (store.stop(), state.close()) };
    }

    const owner = principal('workspace-user', { apiKeyId: 'k-owner', workspaceId: 'w1', userId: 'u-owner', orgRole: 'owner' });
    const admin = principal('workspace-user', { apiKeyId: 'k-admin', workspaceId: 'w1', userId: 'u-admin', orgRole: 'admin' });
    const orgKey = principal('organisation-service', { apiKeyId: 'k-org', workspaceId: 'w1', orgRole: 'admin' });
    const member = principal('workspace-user', { apiKeyId: 'k-mem-1', workspaceId: 'w1', userId: 'u-mem', orgRole: 'member', roles: { w1: 'member', w2: 'manager' } });
    const serviceKey = principal('workspace-service', { apiKeyId: 'k-svc-1', workspaceId: 'w1', orgRole: null, roles: { w1: 'admin' } });

    test('owners see every log of the organisation, whatever the settings, metadata included', async () => {
      const { seen, set, close } = await setup();
      await set(null, { organisationAdminsViewLogs: false, organisationAdminsViewLogMetadata: false, membersViewAllData: false });
      const { ids, visible, rows } = await seen(owner);
      expect(ids).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);
      expect(rows.every((r) => visible.metadataVisible(r))).toBe(true);
      await close();
    });

    test('organisation admins: organisationAdminsViewLogs per workspace (overrides), metadata per organisationAdminsViewLogMetadata', async () => {
      const { seen, set, close } = await setup();
      expect((await seen(admin)).ids).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);
      expect((await seen(orgKey)).ids).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);

      await set(null, { organisationAdminsViewLogs: false });
      const off = await seen(admin);
      expect(off.ids).toEqual([]);
      expect(off.visible.none).toBe(true);
      expect((await seen(orgKey)).ids).toEqual([]);

      await set('w2', { organisationAdminsViewLogs: true }); // a workspace that lets them in
      expect((await seen(admin)).ids).toEqual(['L3', 'L4']);

      await set(null, { organisationAdminsViewLogs: true });
      await set('w1', { organisationAdminsViewLogs: false }); // a workspace that keeps them out; logs without one follow the organisation
      expect((await seen(admin)).ids).toEqual(['L3', 'L4', 'L5']);

      await set('w2', { organisationAdminsViewLogMetadata: false });
      const { visible, rows } = await seen(admin);
      expect(rows.map((r) => [r.id, visible.metadataVisible(r)])).toEqual([['L3', false], ['L4', false], ['L5', true]]);
      await set(null, { organisationAdminsViewLogMetadata: false });
      expect(visible.metadataVisible({ workspace_id: null, api_key_id: 'k-org' })).toBe(true); // a filter is a snapshot
      const later = await seen(admin);
      expect(later.rows.map((r) => later.visible.metadataVisible(r))).toEqual([false, false, false]);
      await close();
    });

    test('members and managers: everything of their workspaces while *ViewAllData is on, else their own keys only', async () => {
      const { seen, set, close } = await setup();
      expect((await seen(member)).ids).toEqual(['L1', 'L2', 'L3', 'L4']); // member of w1, manager of w2; never L5 or L6

      await set(null, { membersViewAllData: false });
      expect((await seen(member)).ids).toEqual(['L1', 'L3', 'L4']); // w1: own key only; w2: still everything (manager)

      await set('w2', { managersViewAllData: false });
      expect((await seen(member)).ids).toEqual(['L1', 'L4']);

      await set('w1', { membersViewAllData: true }); // the data_visibility override of w1
      expect((await seen(member)).ids).toEqual(['L1', 'L2', 'L4']);
      const { visible, rows } = await seen(member);
      expect(rows.every((r) => visible.metadataVisible(r))).toBe(true);
      await close();
    });

    test('a workspace-service key sees its own workspace whatever the settings; a user without a role sees only their keys', async () => {
      const { seen, set, close } = await setup();
      await set(null, { membersViewAllData: false, managersViewAllData: false, organisationAdminsViewLogs: false });
      expect((await seen(serviceKey)).ids).toEqual(['L1', 'L2']);
      const removed = principal('workspace-user', { apiKeyId: 'k-mem-1', workspaceId: 'w1', userId: 'u-mem', orgRole: 'member', roles: {} });
      await set(null, { membersViewAllData: true, managersViewAllData: true });
      expect((await seen(removed)).ids).toEqual(['L1', 'L4']);
      const stranger = principal('workspace-user', { apiKeyId: 'k-none', workspaceId: 'w1', userId: 'u-nobody', orgRole: 'member', roles: {} });
      const nothing = await seen(stranger);
      expect(nothing.ids).toEqual([]);
      expect(nothing.visible.none).toBe(true);
      await close();
    });
  });
}
