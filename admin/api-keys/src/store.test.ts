import { describe, expect, test } from 'bun:test';
import { secretBoxFromEnv } from '@gateway/admin-kit';
import { bootstrapOrganisation, identityMigrations } from '@gateway/admin-identity';
import { createDatabase } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { MemoryStateStore } from '@gateway/state';
import type { Database } from '@gateway/sdk';
import { ApiKeyClock } from './clock.ts';
import { hashSecret } from './secrets.ts';
import { ApiKeyStore } from './store.ts';
import { apiKeyMigrations, apiKeys } from './tables.ts';
import { ApiKeyVerifier } from './verifier.ts';

const box = secretBoxFromEnv({ GATEWAY_ENCRYPTION_KEY: 'store-test-encryption-key-0123456789' });

function store(database: Database, clock = new ApiKeyClock()) {
  return new ApiKeyStore({ database, state: new MemoryStateStore(), verifier: new ApiKeyVerifier(database), clock, keyPrefix: 'st-', secretBox: () => box });
}

for (const dialect of DIALECTS) {
  describe(`ApiKeyStore [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database, url } = await t.fresh();
      await database.migrate([...identityMigrations, ...apiKeyMigrations]);
      const org = await bootstrapOrganisation(database);
      if (!org.created) throw new Error('no organisation');
      return { database, url, organisationId: org.organisationId, workspaceId: org.workspaceId };
    }

    test('two processes rotating one key from the same read: exactly one wins, and its secret is the one stored', async () => {
      const { database, url, organisationId } = await setup();
      const other = await createDatabase(url);
      try {
        const here = store(database);
        const there = store(other);
        const { row } = await here.create({ organisation_id: organisationId, name: 'k', type: 'organisation-service', scopes: ['api_keys.read'], rotation_period_days: 7, next_rotation_at: Date.now() - 1 });
        const results = await Promise.all([here.rotate(row, { scheduled: true }), there.rotate(row, { scheduled: true })]);
        const winners = results.filter((r) => r !== undefined);
        expect(winners).toHaveLength(1);
        const stored = await database.findOne(apiKeys, 'id', row.id, { fresh: true });
        expect(stored?.hash).toBe(hashSecret(winners[0]?.secret ?? ''));
        expect(stored?.previous_hash).toBe(row.hash);
        // The sealed secret opens to the winner's; the pickup hands it out once, to one of two callers.
        expect(box.open(stored?.pending_secret ?? '', { table: 'api_keys', id: row.id, field: 'pending_secret' })).toBe(winners[0]?.secret ?? '');
        const fresh = stored ?? row;
        const picks = await Promise.all([here.reveal(fresh), there.reveal(fresh)]);
        expect(picks.filter((p) => p !== undefined).map((p) => p?.secret)).toEqual([winners[0]?.secret ?? '']);
        // A manual rotation from a stale read loses too.
        expect(await here.rotate(row, { scheduled: false })).toBeUndefined();
      } finally {
        await other.close();
      }
    });

    test('a scheduled rotation keeps the rhythm; after a long outage the next one is a period from now', async () => {
      const { database, organisationId } = await setup();
      const clock = new ApiKeyClock();
      const s = store(database, clock);
      const due = clock.now() - 1000;
      const { row } = await s.create({ organisation_id: organisationId, name: 'k', type: 'organisation-service', scopes: ['api_keys.read'], rotation_period_days: 7, next_rotation_at: due });
      const first = await s.rotate(row, { scheduled: true });
      expect(first?.row.next_rotation_at).toBe(due + 7 * 86_400_000);
      clock.advance(30 * 86_400_000);
      // The clock runs on: "now" is somewhere between two readings.
      const within = (value: number | null | undefined, from: number, offset: number) => {
        expect(value ?? 0).toBeGreaterThanOrEqual(from + offset);
        expect(value ?? 0).toBeLessThanOrEqual(clock.now() + offset);
      };
      let from = clock.now();
      const late = await s.rotate(first?.row ?? row, { scheduled: true });
      within(late?.row.next_rotation_at, from, 7 * 86_400_000);
      // Manual: a period from now, and no sealed secret.
      from = clock.now();
      const manual = await s.rotate(late?.row ?? row, { scheduled: false, transitionMs: 1_800_000 });
      expect(manual?.row.pending_secret).toBeNull();
      within(manual?.row.next_rotation_at, from, 7 * 86_400_000);
      within(manual?.row.previous_expires_at, from, 1_800_000);
    });

    test('removeUserKeys: one workspace, or every workspace of the organisation', async () => {
      const { database, organisationId, workspaceId } = await setup();
      const s = store(database);
      const user = crypto.randomUUID();
      const other = crypto.randomUUID();
      const make = (ws: string, userId: string) =>
        s.create({ organisation_id: organisationId, workspace_id: ws, user_id: userId, name: 'u', type: 'workspace-user', scopes: ['completions.write'] });
      await make(workspaceId, user);
      await make('ws-2', user);
      await make(workspaceId, other);
      expect(await s.removeUserKeys(organisationId, user, workspaceId)).toHaveLength(1);
      expect(await database.count(apiKeys, undefined, { fresh: true })).toBe(2);
      expect(await s.removeUserKeys(organisationId, user, null)).toHaveLength(1);
      expect(await s.removeUserKeys('another-org', other, null)).toHaveLength(0);
      expect(await database.count(apiKeys, undefined, { fresh: true })).toBe(1);
    });
  });
}
