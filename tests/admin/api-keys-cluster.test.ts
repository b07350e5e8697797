// Two gateways sharing a database and Redis (SQLite file and MariaDB): a key changed through one is seen by the other
// at once (well within a second when the machine is idle), although the other had it cached (the change is announced
// on Redis and every verifier listens).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type Json, type KeysGateway, startKeysGateway } from './api-keys-support.ts';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

interface Key extends Json {
  id: string;
  key?: string;
}

/**
 * How long the other gateway may take to follow. Not a speed requirement but the proof that the announcement did it:
 * without it a cached entry goes stale only after the verifier's TTL (5 s for a refused key, 60 s for an accepted
 * one), so the bound stays below 5 s while leaving a loaded 2-core CI machine room (1 s timed out there).
 */
const FOLLOW_MS = 3_000;

/** Polls `status` until it gives `want` or FOLLOW_MS have passed; resolves to the last status. */
async function followed(status: () => Promise<number>, want: number): Promise<number> {
  const deadline = Date.now() + FOLLOW_MS;
  let last = await status();
  while (last !== want && Date.now() < deadline) {
    await Bun.sleep(10);
    last = await status();
  }
  return last;
}

for (const dialect of DIALECTS) {
  describe(`API keys across two gateways [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let a: KeysGateway;
    let b: KeysGateway;

    beforeAll(async () => {
      a = await startKeysGateway(t.url, { REDIS_URL });
      b = await startKeysGateway(t.url, { REDIS_URL });
      await Bun.sleep(200); // both subscriptions are made
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    const readOn = (g: KeysGateway, id: string, secret: string) => async () => (await g.call('GET', `/api-keys/${id}`, undefined, secret)).status;

    test('revoked, re-activated, narrowed and deleted on one gateway: the other follows before its cache would expire', async () => {
      const made = await a.call<Key>('POST', '/api-keys', { name: 'shared', type: 'organisation-service', scopes: ['api_keys.read'] });
      const secret = made.body.key ?? '';
      const onB = readOn(b, made.body.id, secret);
      expect(await onB()).toBe(200); // now cached on b
      expect(await onB()).toBe(200);

      expect((await a.call('PUT', `/api-keys/${made.body.id}`, { status: 'revoked' })).status).toBe(200);
      expect(await followed(onB, 401)).toBe(401);
      expect((await a.call('PUT', `/api-keys/${made.body.id}`, { status: 'active' })).status).toBe(200);
      expect(await followed(onB, 200)).toBe(200);
      // Scopes are part of what is cached: without api_keys.read the route refuses (403), the key still authenticates.
      expect((await a.call('PUT', `/api-keys/${made.body.id}`, { scopes: ['logs.read'] })).status).toBe(200);
      expect(await followed(onB, 403)).toBe(403);
      expect((await a.call('DELETE', `/api-keys/${made.body.id}`)).status).toBe(204);
      expect(await followed(onB, 401)).toBe(401);
    });

    test('rotated on one gateway: the other accepts both secrets in the transition and the new one at once', async () => {
      const made = await a.call<Key>('POST', '/api-keys', { name: 'rotating', type: 'organisation-service', scopes: ['api_keys.read'] });
      const old = made.body.key ?? '';
      expect(await readOn(b, made.body.id, old)()).toBe(200);
      const rotated = await a.call<Key>('POST', `/api-keys/${made.body.id}/rotate`, { key_transition_period_ms: 1_800_000 });
      const secret = rotated.body.key ?? '';
      expect(await readOn(b, made.body.id, secret)()).toBe(200);
      expect(await readOn(b, made.body.id, old)()).toBe(200);
      // The end of the transition, on b's clock: refused from b's cache.
      b.clock.advance(1_800_000);
      try {
        expect(await readOn(b, made.body.id, old)()).toBe(401);
        expect(await readOn(b, made.body.id, secret)()).toBe(200);
      } finally {
        b.clock.advance(-1_800_000);
      }
    });
  });
}
