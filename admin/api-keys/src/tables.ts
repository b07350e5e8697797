import { API_KEY_TYPES, col, defineTable, type Migration } from '@gateway/sdk';

export const apiKeys = defineTable(
  'api_keys',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** Null for organisation-service keys. */
    workspace_id: col.ref().nullable(),
    /** The user a workspace-user key belongs to. */
    user_id: col.ref().nullable(),
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

export const apiKeyMigrations: Migration[] = [{ id: 'api-keys/0001-api-keys', tables: [apiKeys] }];
