import { API_KEY_TYPES, col, defineTable, type Migration, type Row } from '@gateway/sdk';

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
    description: col.string(1024).nullable(),
    type: col.enum(API_KEY_TYPES),
    /** SHA-256 hex of the secret; the secret itself is never stored. */
    hash: col.string(64).unique(),
    /** The first characters of the secret, to recognise a key in lists. */
    prefix_hint: col.string(32),
    scopes: col.json<string[]>(),
    status: col.enum(['active', 'revoked']).default('active'),
    expires_at: col.timestamp().nullable(),
    last_used_at: col.timestamp().nullable(),
    /** When the key's usage counters were last reset (set by usage limits; null until then). */
    last_reset_at: col.timestamp().nullable(),
    /** Rotation policy: 7 (weekly) or 30 (monthly); null: no scheduled rotation. */
    rotation_period_days: col.int().nullable(),
    next_rotation_at: col.timestamp().nullable(),
    /** How long the previous secret keeps working after a rotation of this key. */
    key_transition_period_ms: col.bigint().nullable(),
    last_rotated_at: col.timestamp().nullable(),
    /** The secret before the last rotation, valid until previous_expires_at (the transition period). */
    previous_hash: col.string(64).unique().nullable(),
    previous_expires_at: col.timestamp().nullable(),
    /** A scheduled rotation's new secret, sealed (GATEWAY_ENCRYPTION_KEY) until picked up once with /reveal. */
    pending_secret: col.text().nullable(),
    /** The next_rotation_at whose upcoming-rotation e-mail went out (once per rotation). */
    rotation_notice_for: col.timestamp().nullable(),
    /** The expires_at whose expiry warning went out (once per expiry date). */
    expiry_notice_for: col.timestamp().nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  {
    indexes: [
      { columns: ['organisation_id', 'created_at'] },
      { columns: ['workspace_id'] },
      { columns: ['user_id'] },
      { columns: ['next_rotation_at'] },
      { columns: ['expires_at'] },
    ],
  },
);

export type ApiKeyRow = Row<typeof apiKeys>;

/**
 * Before scopes applied to gateway calls, `completions.write` stood for every gateway call (docs: "gateway calls").
 * Keys that hold it get the scopes that now split those calls, so that they keep doing what they did; keys without
 * it get nothing (a key scoped to `logs.read` was never meant to spend credentials) and `*` needs nothing.
 */
// Spelled out, not taken from MODEL_CALL_SCOPES: a migration says what it did when it ran, whatever comes later.
const SPLIT_FROM_COMPLETIONS = ['embeddings.write', 'moderations.write', 'proxy.write'];

const grantWhereCompletions = {
  sqlite: SPLIT_FROM_COMPLETIONS.map(
    (scope) =>
      `UPDATE "api_keys" SET "scopes" = json_insert("scopes", '$[#]', '${scope}') ` +
      `WHERE EXISTS (SELECT 1 FROM json_each("api_keys"."scopes") WHERE value = 'completions.write') ` +
      `AND NOT EXISTS (SELECT 1 FROM json_each("api_keys"."scopes") WHERE value = '${scope}')`,
  ),
  mysql: SPLIT_FROM_COMPLETIONS.map(
    (scope) =>
      `UPDATE \`api_keys\` SET \`scopes\` = JSON_ARRAY_APPEND(\`scopes\`, '$', '${scope}') ` +
      `WHERE JSON_CONTAINS(\`scopes\`, '"completions.write"') AND NOT JSON_CONTAINS(\`scopes\`, '"${scope}"')`,
  ),
};

export const apiKeyMigrations: Migration[] = [
  { id: 'api-keys/0001-api-keys', tables: [apiKeys] },
  { id: 'api-keys/0002-model-call-scopes', statements: grantWhereCompletions },
];
