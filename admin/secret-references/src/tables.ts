import { col, defineTable, type Migration, type Row } from '@gateway/sdk';
import { MANAGER_TYPES } from './kinds.ts';

/**
 * One secret in an external manager, with the login to read it. The login (`auth_config`) is sealed with the
 * deployment's SecretBox; the secret's value itself is never stored.
 */
export const secretReferences = defineTable(
  'secret_references',
  {
    id: col.id(),
    organisation_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    description: col.string(1024).nullable(),
    manager_type: col.enum(MANAGER_TYPES),
    /** SecretBox-sealed JSON of the kind's auth config (credentials and connection fields). */
    auth_config: col.text(),
    /** Where the secret lives in the manager: AWS SecretId, Azure secret name[/version], Vault KV path. */
    secret_path: col.string(2048),
    /** Default key inside a JSON / KV secret; a mapping's secret_key overrides it. */
    secret_key: col.string(512).nullable(),
    allow_all_workspaces: col.bool().default(false),
    /** Workspace ids; empty when allow_all_workspaces. */
    allowed_workspaces: col.json<string[]>().default(() => []),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'slug'], unique: true }] },
);

export type SecretReferenceRow = Row<typeof secretReferences>;

export const secretReferenceMigrations: Migration[] = [{ id: 'secret-references/0001-secret-references', tables: [secretReferences] }];
