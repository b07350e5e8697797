import type { SealedAt } from '@gateway/admin-kit';
import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';
import { modelAliases } from './alias-table.ts';

/** A saved config: its current version is copied here, so that the hot path loads one table. */
export const savedConfigs = defineTable(
  'saved_configs',
  {
    /** A random UUID (never starts with `{`, so a header value tells an id from a JSON config). */
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    name: col.string(255),
    /** Unique per workspace; `x-gateway-config` may carry it (looked up in the caller's workspace). */
    slug: col.string(64),
    is_default: col.bool().default(false),
    /** The current version's number. */
    version: col.int().default(1),
    /** The current version's config, secrets replaced by the mask. */
    config: col.json<JsonObject>(),
    /** Its secrets, sealed (SecretBox); null when it has none. */
    secrets: col.text().nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }] },
);

/** Every version of every saved config, the current one included. */
export const savedConfigVersions = defineTable(
  'saved_config_versions',
  {
    id: col.id(),
    config_id: col.ref(),
    organisation_id: col.ref(),
    version: col.int(),
    config: col.json<JsonObject>(),
    secrets: col.text().nullable(),
    /** The API key (and its user) that wrote this version. */
    created_by_key: col.ref().nullable(),
    created_by_user: col.ref().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['config_id', 'version'], unique: true }] },
);

export const configMigrations: Migration[] = [
  { id: 'configs/0001-saved-configs', tables: [savedConfigs, savedConfigVersions] },
  { id: 'configs/0002-model-aliases', tables: [modelAliases] },
];

/** Where a row's sealed secrets are bound (crypto.ts): they open only in the row and column they were sealed for. */
export const configSecretsAt = (id: string): SealedAt => ({ table: savedConfigs.name, id, field: 'secrets' });
export const versionSecretsAt = (id: string): SealedAt => ({ table: savedConfigVersions.name, id, field: 'secrets' });
