import { describe, expect, test } from 'bun:test';
import { eq, type Database } from '@gateway/sdk';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { bootstrapOrganisation, identityMigrations } from '@gateway/admin-identity';
import { bootstrapKey } from './bootstrap.ts';
import { hashSecret } from './secrets.ts';
import { apiKeyMigrations, apiKeys } from './tables.ts';
import { RedisStateStore } from '@gateway/state';
import { ApiKeyVerifier } from './verifier.ts';

const ADMIN = 'admin-secret-for-verifier';

for (const dialect of DIALECTS) {
  describe(`ApiKeyVerifier [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function setup() {
      const { database } = await t.fresh();
      await database.migrate([...identityMigrations, ...apiKeyMigrations]);
      const result = await bootstrapOrganisation(database);
      if (!result.created) throw new Error('bootstrap did not run');
      return { database, ...result, ...(await bootstrapKey(database, result.organisationId, { adminApiKey: ADMIN })) };
    }

    async function addKey(database: Database, organisationId: string, workspaceId: string, secret: string, extra: { status?: 'active' | 'revoked'; expires_at?: number | null } = {}) {
      const id = crypto.randomUUID();
      await database.insert(apiKeys, {
        id,
        organisation_id: organisationId,
        workspace_id: workspaceId,
        name: 'k',
        type: 'workspace-service',
        hash: hashSecret(secret),
        prefix_hint: secret.slice(0, 4),
        scopes: ['completions.write'],
        ...extra,
      });
      return id;
    }

    test('a valid key gives its caller; an organisation key acts in the default workspace', async () => {
      const { database, apiKeyId, organisationId, workspaceId } = await setup();
      const verifier = new ApiKeyVerifier(database);
      expect(await verifier.verify(ADMIN)).toEqual({ apiKeyId, organisationId, workspaceId, scopes: ['*'], keyType: 'organisation-service', userId: null });

      const id = await addKey(database, organisationId, workspaceId, 'ws-key-secret');
      expect(await verifier.verify('ws-key-secret')).toEqual({ apiKeyId: id, organisationId, workspaceId, scopes: ['completions.write'], keyType: 'workspace-service', userId: null });
    });

    test('unknown, empty, revoked and expired keys are refused', async () => {
      const { database, organisationId, workspaceId } = await setup();
      const verifier = new ApiKeyVerifier(database);
      await addKey(database, organisationId, workspaceId, 'revoked-secret', { status: 'revoked' });
      await addKey(database, organisationId, workspaceId, 'expired-secret', { expires_at: Date.now() - 1 });
      expect(await verifier.verify('no-such-key')).toBeUndefined();
      expect(await verifier.verify('')).toBeUndefined();
      expect(await verifier.verify('x'.repeat(10_000))).toBeUndefined();
      expect(await verifier.verify('revoked-secret')).toBeUndefined();
      expect(await verifier.verify('expired-secret')).toBeUndefined();
    });

    test('a cache hit does no query: the answer stands even after the row changes, until invalidate()', async () => {
      const { database, organisationId, workspaceId } = await setup();
      const verifier = new ApiKeyVerifier(database, { lastUsedIntervalMs: 3_600_000 });
      const id = await addKey(database, organisationId, workspaceId, 'cached-secret');
      expect((await verifier.verify('cached-secret'))?.apiKeyId).toBe(id);
      await verifier.flush();

      // Revoked behind the verifier's back: the cached caller is still served, so the database was not asked.
      await database.update(apiKeys, { status: 'revoked' }, (c) => eq(c.id, id));
      expect((await verifier.verify('cached-secret'))?.apiKeyId).toBe(id);
      expect(verifier.stats).toEqual({ hits: 1, misses: 1, lookups: 1 });

      verifier.invalidate(id);
      expect(await verifier.verify('cached-secret')).toBeUndefined();
      expect(verifier.stats).toEqual({ hits: 1, misses: 2, lookups: 2 });
    });

    test('peek answers from the cache without a promise, honours expiry and invalidate(), never looks up', async () => {
      const { database, organisationId, workspaceId } = await setup();
      let now = Date.now();
      const verifier = new ApiKeyVerifier(database, { now: () => now, lastUsedIntervalMs: 3_600_000 });
      const id = await addKey(database, organisationId, workspaceId, 'peek-secret', { expires_at: now + 10_000 });
      expect(verifier.peek('peek-secret')).toBeUndefined(); // not verified yet: the caller must use verify()
      expect((await verifier.verify('peek-secret'))?.apiKeyId).toBe(id);
      expect(verifier.peek('peek-secret')?.apiKeyId).toBe(id);
      expect(verifier.peek('peek-secret')?.apiKeyId).toBe(id); // the second time from the secret map
      expect(verifier.peek('other-secret')).toBeUndefined();
      expect(verifier.stats.lookups).toBe(1);
      verifier.invalidate(id);
      expect(verifier.peek('peek-secret')).toBeUndefined();
      expect((await verifier.verify('peek-secret'))?.apiKeyId).toBe(id);
      now += 10_000; // the key expires
      expect(verifier.peek('peek-secret')).toBeUndefined();
      await verifier.flush();
    });

    test('a cached key stops working the moment it expires; the negative cache lasts 5 s', async () => {
      const { database, organisationId, workspaceId } = await setup();
      let now = Date.now();
      const verifier = new ApiKeyVerifier(database, { now: () => now });
      await addKey(database, organisationId, workspaceId, 'short-lived', { expires_at: now + 1000 });
      expect(await verifier.verify('short-lived')).toBeDefined();
      now += 1000;
      expect(await verifier.verify('short-lived')).toBeUndefined();
      expect(verifier.stats).toEqual({ hits: 1, misses: 1, lookups: 1 });

      expect(await verifier.verify('later-created')).toBeUndefined();
      await addKey(database, organisationId, workspaceId, 'later-created');
      now += 4000;
      expect(await verifier.verify('later-created')).toBeUndefined(); // still the cached "no"
      now += 1001;
      expect(await verifier.verify('later-created')).toBeDefined();
    });

    test('positive entries go stale after 60 s; the cache is bounded', async () => {
      const { database, organisationId, workspaceId } = await setup();
      let now = Date.now();
      const verifier = new ApiKeyVerifier(database, { now: () => now, maxEntries: 2 });
      await addKey(database, organisationId, workspaceId, 'k1');
      await verifier.verify('k1');
      now += 60_001;
      await verifier.verify('k1');
      expect(verifier.stats).toEqual({ hits: 0, misses: 2, lookups: 2 });
      await verifier.verify('k2');
      await verifier.verify('k3'); // evicts k1
      await verifier.verify('k1');
      expect(verifier.stats).toEqual({ hits: 0, misses: 5, lookups: 5 });
    });

    test('concurrent misses share one lookup', async () => {
      const { database } = await setup();
      const verifier = new ApiKeyVerifier(database);
      const callers = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(ADMIN)));
      expect(callers.every((c) => c?.scopes[0] === '*')).toBe(true);
      expect(verifier.stats).toEqual({ hits: 0, misses: 20, lookups: 1 });
      await verifier.verify(ADMIN);
      expect(verifier.stats).toEqual({ hits: 1, misses: 20, lookups: 1 });
    });

    test('last_used_at is written at most once a minute per key, off the request path', async () => {
      const { database, apiKeyId } = await setup();
      let now = 1_800_000_000_000;
      const verifier = new ApiKeyVerifier(database, { now: () => now });
      await verifier.verify(ADMIN);
      await verifier.flush();
      expect((await database.findOne(apiKeys, 'id', apiKeyId))?.last_used_at).toBe(now);
      const first = now;
      now += 30_000;
      await verifier.verify(ADMIN);
      await verifier.flush();
      expect((await database.findOne(apiKeys, 'id', apiKeyId))?.last_used_at).toBe(first);
      now += 30_000;
      await verifier.verify(ADMIN);
      await verifier.flush();
      expect((await database.findOne(apiKeys, 'id', apiKeyId))?.last_used_at).toBe(now);
    });
      test('a rotated key: the previous secret works until its transition ends, even from the cache', async () => {
      const { database, organisationId, workspaceId } = await setup();
      let now = Date.now();
      const verifier = new ApiKeyVerifier(database, { now: () => now, lastUsedIntervalMs: 3_600_000 });
      const id = await addKey(database, organisationId, workspaceId, 'old-secret');
      expect((await verifier.verify('old-secret'))?.apiKeyId).toBe(id);
      // What a rotation writes: the new hash, the old one as previous until the transition ends (30 s here, within
      // the cache's 60 s, so that the end is seen on a cache hit).
      await database.update(apiKeys, { hash: hashSecret('new-secret'), previous_hash: hashSecret('old-secret'), previous_expires_at: now + 30_000 }, (c) => eq(c.id, id));
      verifier.invalidate(id);
      expect((await verifier.verify('old-secret'))?.apiKeyId).toBe(id);
      expect((await verifier.verify('new-secret'))?.apiKeyId).toBe(id);
      now += 29_999;
      expect(verifier.peek('old-secret')?.apiKeyId).toBe(id);
      now += 1;
      expect(verifier.peek('old-secret')).toBeUndefined();
      expect(await verifier.verify('old-secret')).toBeUndefined();
      expect((await verifier.verify('new-secret'))?.apiKeyId).toBe(id);
      await verifier.flush();
    });

    test('invalidate(id) also forgets a refused key, so that re-activating it counts at once', async () => {
      const { database, organisationId, workspaceId } = await setup();
      const verifier = new ApiKeyVerifier(database, { lastUsedIntervalMs: 3_600_000 });
      const id = await addKey(database, organisationId, workspaceId, 'paused-secret', { status: 'revoked' });
      expect(await verifier.verify('paused-secret')).toBeUndefined();
      await database.update(apiKeys, { status: 'active' }, (c) => eq(c.id, id));
      verifier.invalidate(id);
      expect((await verifier.verify('paused-secret'))?.apiKeyId).toBe(id);
      await verifier.flush();
    });

    test('a change announced through Redis reaches the verifier of another process', async () => {
      const { database, organisationId, workspaceId } = await setup();
      const prefix = `gw-test-${crypto.randomUUID()}:`;
      const [a, b] = [new RedisStateStore('redis://127.0.0.1:6379', prefix), new RedisStateStore('redis://127.0.0.1:6379', prefix)];
      const here = new ApiKeyVerifier(database, { lastUsedIntervalMs: 3_600_000 });
      const there = new ApiKeyVerifier(database, { lastUsedIntervalMs: 3_600_000 });
      const stop = there.listen(b);
      try {
        await Bun.sleep(100); // the subscription is made
        const id = await addKey(database, organisationId, workspaceId, 'shared-secret');
        expect((await there.verify('shared-secret'))?.apiKeyId).toBe(id);
        await database.update(apiKeys, { status: 'revoked' }, (c) => eq(c.id, id));
        expect((await there.verify('shared-secret'))?.apiKeyId).toBe(id); // cached
        await here.changed(a, id);
        const deadline = Date.now() + 2_000;
        while ((await there.verify('shared-secret')) && Date.now() < deadline) await Bun.sleep(10);
        expect(await there.verify('shared-secret')).toBeUndefined();
      } finally {
        stop();
        await Promise.all([here.flush(), there.flush(), a.close(), b.close()]);
      }
    });
});
}
