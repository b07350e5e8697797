// The settings store on both dialects: effective values per organisation and workspace, concurrent writes that
// all land, the cache (kept until a change, dropped by a write here or in another process through Redis, expiring
// on its own), and the services' contracts.
import { describe, expect, test } from 'bun:test';
import { createDatabase } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { and, eq } from '@gateway/sdk';
import { MemoryStateStore, RedisStateStore } from '@gateway/state';
import { SETTINGS_CHANNEL, SettingsStore } from './store.ts';
import { organisationSettings, settingsMigrations } from './tables.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function until(check: () => Promise<boolean>, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(10);
  }
  return check();
}

for (const dialect of DIALECTS) {
  describe(`SettingsStore [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database, url } = await t.fresh();
      await database.migrate(settingsMigrations);
      return { database, url };
    }

    test('effective values: defaults, organisation values, workspace overrides; organisations apart', async () => {
      const { database } = await setup();
      const state = new MemoryStateStore();
      const store = new SettingsStore(database, state);
      store.start();
      try {
        expect((await store.get('org-a', null)).membersViewAllData).toBe(true);
        expect(await store.keySettings('org-a', 'ws-1')).toEqual({ user_api_key_auto_create: false, user_api_key_rotation_period: null, user_api_key_ttl: null });
        expect(await store.session('org-a')).toEqual({ max_session_ttl: null });

        const first = await store.write('org-a', 'security', null, { set: { membersViewAllData: false, membersWritePrompts: true }, remove: [] });
        expect(first).toEqual({ before: {}, after: { membersViewAllData: false, membersWritePrompts: true } });
        await store.write('org-a', 'security', 'ws-1', { set: { membersViewAllData: true }, remove: [] });
        await store.write('org-a', 'api_keys', null, { set: { user_api_key_auto_create: true, user_api_key_rotation_period: 'weekly' }, remove: [] });
        await store.write('org-a', 'api_keys', 'ws-1', { set: { user_api_key_rotation_period: null, user_api_key_ttl: 600 }, remove: [] });
        await store.write('org-a', 'session', null, { set: { max_session_ttl: 1800 }, remove: [] });

        expect(await store.get('org-a', null)).toMatchObject({ membersViewAllData: false, membersWritePrompts: true });
        expect(await store.get('org-a', 'ws-1')).toMatchObject({ membersViewAllData: true, membersWritePrompts: true });
        expect(await store.get('org-a', 'ws-2')).toMatchObject({ membersViewAllData: false });
        expect(await store.get('org-b', null)).toMatchObject({ membersViewAllData: true, membersWritePrompts: false });
        expect(await store.keySettings('org-a', null)).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: 'weekly', user_api_key_ttl: null });
        expect(await store.keySettings('org-a', 'ws-1')).toEqual({ user_api_key_auto_create: true, user_api_key_rotation_period: null, user_api_key_ttl: 600 });
        expect(await store.session('org-a')).toEqual({ max_session_ttl: 1800 });

        const dropped = await store.write('org-a', 'security', null, { set: {}, remove: ['membersViewAllData'] });
        expect(dropped).toEqual({ before: { membersViewAllData: false, membersWritePrompts: true }, after: { membersWritePrompts: true } });
        expect((await store.get('org-a', 'ws-2')).membersViewAllData).toBe(true);
        expect(await store.stored('org-a', 'security', 'ws-1')).toEqual({ membersViewAllData: true });
      } finally {
        store.stop();
        await state.close();
      }
    });

    test('concurrent writes of one row all land (none lost, no duplicate row)', async () => {
      const { database, url } = await setup();
      // MySQL: a second pool, so the writes really run side by side. SQLite: one connection (bun:sqlite blocks the
      // thread while it waits for a lock, so two connections of one process would wait on each other).
      const other = dialect === 'mysql' ? await createDatabase(url) : database;
      const state = new MemoryStateStore();
      const stores = [new SettingsStore(database, state), new SettingsStore(other, state)];
      try {
        const keys = ['membersViewAllData', 'managersViewAllData', 'membersViewPrompts', 'managersViewPrompts', 'membersViewAnalytics', 'managersViewAnalytics'];
        await Promise.all(keys.map((key, i) => stores[i % 2]!.write('org-c', 'security', 'ws-9', { set: { [key]: false }, remove: [] })));
        const rows = await database.select(organisationSettings, { where: (c) => and(eq(c.organisation_id, 'org-c'), eq(c.workspace_id, 'ws-9')), fresh: true });
        expect(rows).toHaveLength(1);
        expect(Object.keys(rows[0]!.values).sort()).toEqual([...keys].sort());
        expect(rows[0]!.version).toBe(keys.length - 1);
      } finally {
        if (other !== database) await other.close();
        await state.close();
      }
    });

    test('cached until a change: a write elsewhere is seen after its announcement, or when the entry expires', async () => {
      const { database } = await setup();
      const state = new MemoryStateStore();
      const store = new SettingsStore(database, state, { ttlMs: 60_000 });
      store.start();
      try {
        await store.write('org-d', 'security', null, { set: { organisationAdminsViewLogs: false }, remove: [] });
        expect((await store.get('org-d', null)).organisationAdminsViewLogs).toBe(false);
        // Changed behind the store's back: the cached value stays ...
        await database.update(organisationSettings, { values: { organisationAdminsViewLogs: true } }, (c) => eq(c.organisation_id, 'org-d'));
        expect((await store.get('org-d', null)).organisationAdminsViewLogs).toBe(false);
        // ... until the change is announced on the channel.
        await state.publish(SETTINGS_CHANNEL, 'org-d');
        expect((await store.get('org-d', null)).organisationAdminsViewLogs).toBe(true);
      } finally {
        store.stop();
      }

      const short = new SettingsStore(database, state, { ttlMs: 50 }); // not started: only expiry helps it
      expect((await short.get('org-d', null)).organisationAdminsViewLogs).toBe(true);
      await database.update(organisationSettings, { values: { organisationAdminsViewLogs: false } }, (c) => eq(c.organisation_id, 'org-d'));
      expect((await short.get('org-d', null)).organisationAdminsViewLogs).toBe(true);
      await Bun.sleep(80);
      expect((await short.get('org-d', null)).organisationAdminsViewLogs).toBe(false);
      await state.close();
    });

    test('two processes sharing Redis: a write in one reaches the cache of the other', async () => {
      const { database, url } = await setup();
      const other = await createDatabase(url);
      const prefix = `settings-test-${crypto.randomUUID()}:`;
      const [stateA, stateB] = [new RedisStateStore(REDIS_URL, prefix), new RedisStateStore(REDIS_URL, prefix)];
      const a = new SettingsStore(database, stateA, { ttlMs: 600_000 });
      const b = new SettingsStore(other, stateB, { ttlMs: 600_000 });
      a.start();
      b.start();
      try {
        await Bun.sleep(100); // subscriptions reach Redis
        expect((await b.get('org-e', 'ws-1')).managersViewAllData).toBe(true); // cached in b
        expect((await b.keySettings('org-e', 'ws-1')).user_api_key_auto_create).toBe(false);
        await a.write('org-e', 'security', 'ws-1', { set: { managersViewAllData: false }, remove: [] });
        await a.write('org-e', 'api_keys', null, { set: { user_api_key_auto_create: true }, remove: [] });
        expect(await until(async () => !(await b.get('org-e', 'ws-1')).managersViewAllData)).toBe(true);
        expect(await until(async () => (await b.keySettings('org-e', 'ws-1')).user_api_key_auto_create)).toBe(true);
      } finally {
        a.stop();
        b.stop();
        await Promise.all([stateA.close(), stateB.close(), other.close()]);
      }
    });

    test('a failed load is not cached: the next read tries again', async () => {
      const { database } = await t.fresh(); // no table yet: the first load fails
      const state = new MemoryStateStore();
      const store = new SettingsStore(database, state);
      await expect(store.get('org-f', null)).rejects.toThrow();
      await database.migrate(settingsMigrations);
      await database.insert(organisationSettings, { organisation_id: 'org-f', category: 'security', values: { membersViewAllData: false } });
      expect((await store.get('org-f', null)).membersViewAllData).toBe(false);
      await state.close();
    });
  });
}
