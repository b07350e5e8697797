import { describe, expect, test } from 'bun:test';
import { createDatabase } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { bootstrapOrganisation, identityMigrations, organisations, workspaces } from '@gateway/admin-identity';
import { ALL_SCOPES, type Database } from '@gateway/sdk';
import { bootstrapKey, type BootstrapKeyOptions } from './bootstrap.ts';
import { hashSecret } from './secrets.ts';
import { apiKeyMigrations, apiKeys } from './tables.ts';

/** What a starting process does: the organisation, then (if this process made it) the key. */
async function bootstrap(database: Database, options: BootstrapKeyOptions = {}) {
  const org = await bootstrapOrganisation(database);
  if (!org.created) return org;
  const key = await bootstrapKey(database, org.organisationId, options);
  return { ...org, ...key };
}

for (const dialect of DIALECTS) {
  describe(`bootstrap [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    async function fresh() {
      const opened = await t.fresh();
      await opened.database.migrate([...identityMigrations, ...apiKeyMigrations]);
      return opened;
    }

    test('with GATEWAY_ADMIN_API_KEY: that secret becomes an organisation key with every scope; the next steps printed, not the secret', async () => {
      const { database } = await fresh();
      const printed: string[] = [];
      const result = await bootstrap(database, { adminApiKey: 'admin-secret-123456', print: (l) => printed.push(l) });
      expect(result).toMatchObject({ created: true, generated: false });
      if (!result.created) return;
      expect(printed).toHaveLength(1);
      expect(printed[0]).toContain('the value of GATEWAY_ADMIN_API_KEY');
      expect(printed[0]).not.toContain('admin-secret-123456');

      const org = await database.findOne(organisations, 'id', result.organisationId);
      expect(org).toMatchObject({ slug: 'default' });
      const ws = await database.findOne(workspaces, 'id', result.workspaceId);
      expect(ws).toMatchObject({ organisation_id: result.organisationId, status: 'active', slug: 'default' });
      const key = await database.findOne(apiKeys, 'hash', hashSecret('admin-secret-123456'));
      expect(key).toMatchObject({
        id: result.apiKeyId,
        organisation_id: result.organisationId,
        workspace_id: null,
        type: 'organisation-service',
        scopes: [ALL_SCOPES],
        status: 'active',
        expires_at: null,
        prefix_hint: 'admi',
      });
      // Only the hash is stored.
      expect(JSON.stringify(await database.select(apiKeys))).not.toContain('admin-secret-123456');
    });

    test('without it: a generated key with API_KEY_PREFIX, printed once', async () => {
      const { database } = await fresh();
      const printed: string[] = [];
      const result = await bootstrap(database, { keyPrefix: 'gwk-', print: (l) => printed.push(l) });
      expect(result).toMatchObject({ created: true, generated: true });
      expect(printed).toHaveLength(1);
      const secret = /export GATEWAY_KEY=(\S+)/.exec(printed[0]!)![1]!;
      expect(printed[0]).toContain(`\n    ${secret}\n`);
      expect(secret).toMatch(/^gwk-[A-Za-z0-9_-]{40}$/);
      const key = await database.findOne(apiKeys, 'hash', hashSecret(secret));
      expect(key?.prefix_hint).toBe(secret.slice(0, 8));

      // A second start finds the database populated and prints nothing.
      expect(await bootstrap(database, { keyPrefix: 'gwk-', print: (l) => printed.push(l) })).toEqual({ created: false });
      expect(printed).toHaveLength(1);
      expect(await database.count(apiKeys)).toBe(1);
    });

    test('several processes starting at once create one organisation, one workspace and one key', async () => {
      const { url, database } = await fresh();
      const processes = await Promise.all(Array.from({ length: 5 }, () => createDatabase(url)));
      const printed: string[] = [];
      try {
        const results = await Promise.all(processes.map((db) => bootstrap(db, { print: (l) => printed.push(l) })));
        expect(results.filter((r) => r.created)).toHaveLength(1);
      } finally {
        await Promise.all(processes.map((db) => db.close()));
      }
      expect(printed).toHaveLength(1);
      expect(await database.count(organisations)).toBe(1);
      expect(await database.count(workspaces)).toBe(1);
      expect(await database.count(apiKeys)).toBe(1);
    });
  });
}
