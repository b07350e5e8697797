/**
 * Identity: organisations and workspaces. At start it migrates its tables and bootstraps an empty database; the
 * outcome is the `identityBootstrap` service, from which the api-keys plugin makes the first key.
 */
import { definePlugin, type Database } from '@gateway/sdk';
import { bootstrapOrganisation } from './bootstrap.ts';
import { identityMigrations } from './tables.ts';

export { bootstrapOrganisation, BOOTSTRAP_SLUG, type BootstrapResult } from './bootstrap.ts';
export { identityMigrations, organisations, users, workspaceMembers, workspaces } from './tables.ts';

export default definePlugin({
  async setup(api) {
    const database = api.service<Database>('database');
    await database.migrate(identityMigrations);
    api.provide('identityBootstrap', await bootstrapOrganisation(database));
  },
});
