// Identity migrations: a database made by the first two migrations (as shipped) gains the workspace details and the
// invitation table, its rows intact; the added-column statements may run again (a crash before their record).
import { describe, expect, test } from 'bun:test';
import { identityMigrations, userInvites, workspaces } from '@gateway/admin-identity';
import { statementsOf } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { eq } from '@gateway/sdk';

for (const dialect of DIALECTS) {
  describe(`identity migrations [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('0003 and 0004 upgrade a database of 0001-0002; everything applies once', async () => {
      const { database } = await t.fresh();
      expect(await database.migrate(identityMigrations.slice(0, 2))).toEqual(['identity/0001-organisations-workspaces', 'identity/0002-users-members']);
      // A row written by the old code: only the 0001 columns.
      const id = crypto.randomUUID();
      if (database.dialect === 'sqlite')
        database.db.$client.run(`INSERT INTO "workspaces" ("id","organisation_id","name","slug","status","created_at") VALUES (?,?,?,?,?,?)`, [id, 'org', 'Old', 'old', 'active', 1]);
      else
        await database.db.$client.query('INSERT INTO `workspaces` (`id`,`organisation_id`,`name`,`slug`,`status`,`created_at`) VALUES (?,?,?,?,?,?)', [id, 'org', 'Old', 'old', 'active', 1]);

      expect(await database.migrate(identityMigrations)).toEqual(['identity/0003-workspace-details', 'identity/0004-user-invites']);
      expect(await database.migrate(identityMigrations)).toEqual([]);
      const row = await database.findOne(workspaces, 'id', id);
      expect(row).toMatchObject({ name: 'Old', slug: 'old', description: null, defaults: null, updated_at: null, archived_at: null, last_reset_at: null });
      await database.update(workspaces, { description: 'd', defaults: { metadata: { team: 'a' } }, last_reset_at: 5 }, (c) => eq(c.id, id));
      expect(await database.findOne(workspaces, 'id', id)).toMatchObject({ description: 'd', defaults: { metadata: { team: 'a' } }, last_reset_at: 5 });
      expect(await database.count(userInvites)).toBe(0);

      if (database.dialect === 'mysql') {
        // Re-runnable: a process that died after the ALTERs but before recording 0003 runs them again.
        const migration = identityMigrations.find((m) => m.id === 'identity/0003-workspace-details');
        for (const statement of statementsOf(migration!, 'mysql')) await database.db.$client.query(statement);
        expect((await database.findOne(workspaces, 'id', id))?.description).toBe('d');
      }
    });
  });
}
