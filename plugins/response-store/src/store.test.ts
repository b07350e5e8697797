// The stored responses on both dialects: a Response round-trips with its input items and context, only within its
// workspace, until its retention ends (a replaceable clock, no waiting); delete and the sweep; the retention setting.
import { describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { retentionDays } from './index.ts';
import { DAY_MS, SqlResponseStore } from './store.ts';
import { responseStoreMigrations } from './tables.ts';

const record = (id: string, workspaceId = 'ws-a') => ({
  id,
  workspaceId,
  response: { id, object: 'response', status: 'completed', output: [{ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi «there»', annotations: [] }] }] },
  inputItems: [{ id: 'msg_0', type: 'message', role: 'user', content: 'Hello' }],
  context: [{ type: 'message', role: 'user', content: 'Earlier' }],
  provider: 'anthropic',
  translated: true,
});

for (const dialect of DIALECTS) {
  describe(`response store [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('a response round-trips within its workspace only, until it expires', async () => {
      const { database } = await t.fresh();
      await database.migrate(responseStoreMigrations);
      let now = 1_700_000_000_000;
      const store = new SqlResponseStore(database, 30 * DAY_MS, () => now);
      await store.save(record('resp_1'));
      const got = await store.get('ws-a', 'resp_1');
      expect(got).toEqual({ ...record('resp_1'), createdAt: now });
      expect(await store.get('ws-b', 'resp_1')).toBeUndefined();
      // The same id in another workspace is another response.
      await store.save(record('resp_1', 'ws-b'));
      expect((await store.get('ws-b', 'resp_1'))?.workspaceId).toBe('ws-b');
      now += 30 * DAY_MS - 1;
      expect(await store.get('ws-a', 'resp_1')).toBeDefined();
      now += 2;
      expect(await store.get('ws-a', 'resp_1')).toBeUndefined();
      expect(await store.delete('ws-a', 'resp_1')).toBe(false);
      expect(await store.sweep()).toBe(2);
    });

    test('delete removes the workspace copy only; saving an id twice keeps the first', async () => {
      const { database } = await t.fresh();
      await database.migrate(responseStoreMigrations);
      const store = new SqlResponseStore(database, DAY_MS);
      await store.save(record('resp_2'));
      await store.save({ ...record('resp_2'), provider: 'other' });
      expect((await store.get('ws-a', 'resp_2'))?.provider).toBe('anthropic');
      expect(await store.delete('ws-b', 'resp_2')).toBe(false);
      expect(await store.delete('ws-a', 'resp_2')).toBe(true);
      expect(await store.get('ws-a', 'resp_2')).toBeUndefined();
    });
  });
}

test('RESPONSES_RETENTION_DAYS: default 30, a positive number of days, anything else refused at start', () => {
  expect(retentionDays(undefined)).toBe(30);
  expect(retentionDays('')).toBe(30);
  expect(retentionDays('7')).toBe(7);
  expect(retentionDays('0.5')).toBe(0.5);
  expect(() => retentionDays('0')).toThrow(/RESPONSES_RETENTION_DAYS/);
  expect(() => retentionDays('a week')).toThrow(/RESPONSES_RETENTION_DAYS/);
});
