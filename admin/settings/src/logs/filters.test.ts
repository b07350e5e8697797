// The common log filters on both dialects: each parameter selects exactly the rows it names (metadata through the
// dialect's JSON lookup), workspaces by id or slug with archived ones for organisation admins only, bad values 400,
// and logScope keeps a member who may not see all data to their own keys whatever they filter by.
import { describe, expect, test } from 'bun:test';
import { apiKeyMigrations, apiKeys } from '@gateway/admin-api-keys';
import { identityMigrations, users, workspaceMembers, workspaces } from '@gateway/admin-identity';
import { requestLogMigrations, requestLogs } from '@gateway/plugin-request-log';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import type { Caller, Database, NewRow, Principal, Role } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import { SettingsStore } from '../store.ts';
import { settingsMigrations } from '../tables.ts';
import { filterCondition, logScope, parseLogFilters } from './filters.ts';

const ORG = 'org-f';
const T0 = Date.UTC(2026, 0, 1);

function principal(orgRole: Role | null, userId: string | null, roles: Record<string, Role> = {}): Principal {
  const caller: Caller = { apiKeyId: 'caller', organisationId: ORG, workspaceId: 'w1', scopes: ['analytics.read'], keyType: 'workspace-user', userId };
  const isOrgAdmin = orgRole === 'owner' || orgRole === 'admin';
  return { caller, orgRole, isOrgAdmin, workspaceRole: async (ws) => (isOrgAdmin ? 'admin' : (roles[ws] ?? null)) };
}

async function seed(database: Database) {
  await database.migrate([...identityMigrations, ...apiKeyMigrations, ...requestLogMigrations, ...settingsMigrations]);
  await database.insert(workspaces, [
    { id: 'w1', organisation_id: ORG, name: 'One', slug: 'one' },
    { id: 'w2', organisation_id: ORG, name: 'Old', slug: 'old', status: 'archived' },
  ]);
  await database.insert(users, [{ id: 'u-mem', organisation_id: ORG, email: 'mem@x.test', role: 'member' }]);
  await database.insert(workspaceMembers, [{ organisation_id: ORG, workspace_id: 'w1', user_id: 'u-mem', role: 'member' }]);
  await database.insert(apiKeys, {
    id: 'k-mem', organisation_id: ORG, workspace_id: 'w1', user_id: 'u-mem', name: 'k', type: 'workspace-user',
    hash: 'k'.padEnd(64, '0'), prefix_hint: 'x', scopes: ['completions.write'],
  });
  const row = (id: string, over: Partial<NewRow<typeof requestLogs>>) => ({
    id, trace_id: `t-${id}`, organisation_id: ORG, workspace_id: 'w1', api_key_id: 'k-other', provider: 'openai', model: 'gpt-4o',
    endpoint: 'chatComplete', method: 'POST', path: '/chat/completions', status: 200, latency_ms: 100, created_at: T0, ...over,
  });
  await database.insert(requestLogs, [
    row('A', { api_key_id: 'k-mem', metadata: { team: 'red', env: 'prod' }, cost_cents: 1.5, latency_ms: 50 }),
    row('B', { model: 'gpt-4o-mini', status: 500, metadata: { team: 'blue' }, cost_cents: 3, created_at: T0 + 1000 }),
    row('C', { provider: 'anthropic', model: 'claude', workspace_id: 'w2', latency_ms: 900, created_at: T0 + 2000 }),
    row('D', { api_key_id: 'k-mem', metadata: { team: 'red' }, status: 429, created_at: T0 + 3000 }),
  ]);
}

for (const dialect of DIALECTS) {
  describe(`log filters [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('each filter selects exactly its rows', async () => {
      const { database } = await t.fresh();
      await seed(database);
      const owner = principal('owner', null);
      const ids = async (query: string) => {
        const filters = await parseLogFilters(database, owner, new URLSearchParams(query));
        const where = filterCondition(database.dialect, filters);
        return (await database.select(requestLogs, { where })).map((r) => r.id).sort().join('');
      };
      expect(await ids('')).toBe('ABCD');
      expect(await ids(`time_of_generation_min=${T0 + 1000}&time_of_generation_max=${new Date(T0 + 3000).toISOString()}`)).toBe('BC');
      expect(await ids('workspace_id=old')).toBe('C');
      expect(await ids('workspace_id=w1')).toBe('ABD');
      expect(await ids('api_key_id=k-mem')).toBe('AD');
      expect(await ids('provider=anthropic')).toBe('C');
      expect(await ids('model=gpt-4o-mini,claude')).toBe('BC');
      expect(await ids('status=500,429')).toBe('BD');
      expect(await ids('trace_id=t-B')).toBe('B');
      expect(await ids(`metadata=${encodeURIComponent('{"team":"red"}')}`)).toBe('AD');
      expect(await ids(`metadata=${encodeURIComponent('{"team":"red","env":"prod"}')}`)).toBe('A');
      expect(await ids('cost_min=1.5&cost_max=2')).toBe('A');
      expect(await ids('cost_min=2')).toBe('B');
      expect(await ids('latency_min=100&latency_max=899')).toBe('BD');
    });

    test('bad values are 400 naming the parameter; an archived workspace is not a member’s to name', async () => {
      const { database } = await t.fresh();
      await seed(database);
      const param = async (p: Principal, query: string) =>
        parseLogFilters(database, p, new URLSearchParams(query)).then(
          () => 'ok',
          (e: { status: number; param?: string | null }) => `${e.status} ${e.param ?? ''}`,
        );
      const owner = principal('owner', null);
      expect(await param(owner, 'status=abc')).toBe('400 status');
      expect(await param(owner, 'metadata=[1]')).toBe('400 metadata');
      expect(await param(owner, `metadata=${encodeURIComponent('{"a b":"x"}')}`)).toBe('400 metadata');
      expect(await param(owner, 'cost_min=-1')).toBe('400 cost_min');
      expect(await param(owner, 'time_of_generation_min=yesterday')).toBe('400 time_of_generation_min');
      expect(await param(owner, 'time_of_generation_min=2000&time_of_generation_max=1000')).toBe('400 time_of_generation_min');
      expect(await param(owner, 'workspace_id=nope')).toStartWith('404');
      expect(await param(principal('admin', null), 'workspace_id=old')).toBe('ok');
      expect(await param(principal('member', 'u-mem', { w1: 'member', w2: 'member' }), 'workspace_id=old')).toStartWith('404');
    });

    test('logScope: a member who may not see all data sees only their own keys’ rows, filters applied on top', async () => {
      const { database } = await t.fresh();
      await seed(database);
      const store = new SettingsStore(database, new MemoryStateStore());
      const set = (values: Record<string, boolean>) => store.write(ORG, 'security', null, { set: values, remove: [] });
      await set({ membersViewAllData: false });
      const ids = async (p: Principal, query: string) => {
        const scope = await logScope({ database, security: store }, p, new URLSearchParams(query));
        return (await database.select(requestLogs, { where: scope.where })).map((r) => r.id).sort().join('');
      };
      const member = principal('member', 'u-mem', { w1: 'member' });
      expect(await ids(member, '')).toBe('AD');
      expect(await ids(member, 'api_key_id=k-other')).toBe('');
      expect(await ids(member, 'status=429')).toBe('D');
      await set({ membersViewAllData: true });
      expect(await ids(member, '')).toBe('ABD');
      expect(await ids(principal('owner', null), '')).toBe('ABCD');
    });
  });
}
