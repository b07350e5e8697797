import { col, defineTable, type Migration } from '@gateway/sdk';

export const API_KEY_TYPES = ['organisation-service', 'workspace-service', 'workspace-user'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];

/** The scope that grants every other scope (the bootstrap key has it). */
export const ALL_SCOPES = '*';

export const organisations = defineTable('organisations', {
  id: col.id(),
  name: col.string(255),
  slug: col.string(255).unique(),
  created_at: col.timestamp().default(Date.now),
});

export const workspaces = defineTable(
  'workspaces',
  {
    id: col.id(),
    organisation_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    status: col.enum(['active', 'archived']).default('active'),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'slug'], unique: true }] },
);

export const apiKeys = defineTable(
  'api_keys',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** Null for organisation-service keys. */
    workspace_id: col.ref().nullable(),
    name: col.string(255),
    type: col.enum(API_KEY_TYPES),
    /** SHA-256 hex of the secret; the secret itself is never stored. */
    hash: col.string(64).unique(),
    /** The first characters of the secret, to recognise a key in lists. */
    prefix_hint: col.string(32),
    scopes: col.json<string[]>(),
    status: col.enum(['active', 'revoked']).default('active'),
    expires_at: col.timestamp().nullable(),
    last_used_at: col.timestamp().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id'] }, { columns: ['workspace_id'] }] },
);

export const identityMigrations: Migration[] = [{ id: 'identity/0001-organisations-workspaces-api-keys', tables: [organisations, workspaces, apiKeys] }];
