// GATEWAY_ADMIN_API_KEY on a database that already has an organisation, on both dialects: applied when unknown,
// nothing when already active, refused (with the reason) when revoked, expired or rotated away.
import { describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { bootstrapOrganisation, identityMigrations } from '@gateway/admin-identity';
import { ALL_SCOPES, eq } from '@gateway/sdk';
import { announceAdminKeyFromEnv } from './admin-key-env.ts';
import { applyAdminKeyFromEnv, createAdminKey, findOrganisation } from './admin-key.ts';
import { bootstrapKey } from './bootstrap.ts';
import { hashSecret } from './secrets.ts';
import { apiKeyMigrations, apiKeys } from './tables.ts';

const FIRST = 'first-admin-key-0123456789abcdefghij';
const OTHER = 'second-admin-key-0123456789abcdefghij';

for (const dialect of DIALECTS) {
  describe(`admin key from GATEWAY_ADMIN_API_KEY on an existing database [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function started() {
      const { database } = await t.fresh();
      await database.migrate([...identityMigrations, ...apiKeyMigrations]);
      const org = await bootstrapOrganisation(database);
      if (!org.created) throw new Error('expected a new organisation');
      await bootstrapKey(database, org.organisationId, { adminApiKey: FIRST, print: () => {} });
      return { database, organisationId: org.organisationId };
    }

    test('the same secret: already there, nothing added', async () => {
      const { database } = await started();
      expect(await applyAdminKeyFromEnv(database, FIRST)).toMatchObject({ applied: 'already' });
      expect(await database.count(apiKeys)).toBe(1);
    });

    test('an unknown secret: added as an organisation-service key with every scope, stored hashed; twice is once', async () => {
      const { database, organisationId } = await started();
      const outcome = await applyAdminKeyFromEnv(database, OTHER);
      expect(outcome).toMatchObject({ applied: 'added', organisation: { id: organisationId, slug: 'default' } });
      const row = await database.findOne(apiKeys, 'hash', hashSecret(OTHER));
      expect(row).toMatchObject({ organisation_id: organisationId, type: 'organisation-service', scopes: [ALL_SCOPES], status: 'active' });
      expect(JSON.stringify(await database.select(apiKeys))).not.toContain(OTHER);
      expect(await applyAdminKeyFromEnv(database, OTHER)).toMatchObject({ applied: 'already' });
      expect(await database.count(apiKeys)).toBe(2);
    });

    test('a revoked, an expired or a rotated-away secret is not brought back, and the refusal is loud', async () => {
      const { database } = await started();
      await database.update(apiKeys, { status: 'revoked' }, (c) => eq(c.hash, hashSecret(FIRST)));
      expect(await applyAdminKeyFromEnv(database, FIRST)).toMatchObject({ applied: false, reason: expect.stringContaining('revoked') });

      const org = (await findOrganisation(database))!;
      const expired = await createAdminKey(database, org, { secret: OTHER });
      await database.update(apiKeys, { expires_at: Date.now() - 1000 }, (c) => eq(c.id, expired.apiKeyId));
      expect(await applyAdminKeyFromEnv(database, OTHER)).toMatchObject({ applied: false, reason: expect.stringContaining('expired') });

      const rotated = await createAdminKey(database, org);
      const old = 'rotated-away-secret-0123456789abcdefghij';
      await database.update(apiKeys, { previous_hash: hashSecret(old), previous_expires_at: Date.now() - 1000 }, (c) => eq(c.id, rotated.apiKeyId));
      expect(await applyAdminKeyFromEnv(database, old)).toMatchObject({ applied: false, reason: expect.stringContaining('rotated') });
      expect(await database.count(apiKeys)).toBe(3);

      const logged: string[] = [];
      const written: string[] = [];
      const logger = { info: () => {}, warn: () => {}, error: (_: unknown, message: string) => void logged.push(message) };
      await announceAdminKeyFromEnv(database, FIRST, logger, (text) => void written.push(text));
      expect(logged[0]).toContain('GATEWAY_ADMIN_API_KEY is NOT applied');
      expect(written.join('')).toContain('npm run admin -- create-key');
    });
  });
}
