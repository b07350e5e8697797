import { col, defineTable, type Migration, type ModelPrices } from '@gateway/sdk';
import type { SealedAt, SecretMapping } from '@gateway/admin-kit';
import type { PricingAdjustments } from './credentials.ts';

/**
 * An organisation's credentials for one provider. `credentials` is the sealed JSON `{key?, configurations}` (see
 * credentials.ts); nothing secret is stored in clear.
 */
export const integrations = defineTable(
  'integrations',
  {
    id: col.id(),
    organisation_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    ai_provider_id: col.string(100),
    description: col.text().nullable(),
    credentials: col.text(),
    /** null: the provider's own authentication; `entraFederated` for Azure directory federation. */
    auth_mode: col.string(32).nullable(),
    secret_mappings: col.json<SecretMapping[]>().default(() => []),
    pricing_adjustments: col.json<PricingAdjustments>().nullable(),
    /** The slug of the provider made in each workspace given access; null when create_default_provider was false. */
    default_provider_slug: col.string(255).nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
    last_reset_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['organisation_id', 'slug'], unique: true }] },
);

/** Which workspaces may use an integration. */
export const integrationWorkspaces = defineTable(
  'integration_workspaces',
  {
    id: col.id(),
    organisation_id: col.ref(),
    integration_id: col.ref(),
    workspace_id: col.ref(),
    enabled: col.bool().default(true),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['integration_id', 'workspace_id'], unique: true }, { columns: ['workspace_id'] }] },
);

const integrationModelColumnsV1 = {
  id: col.id(),
  organisation_id: col.ref(),
  integration_id: col.ref(),
  slug: col.string(255),
  enabled: col.bool().default(true),
  configurations: col.json<{ custom_host?: string }>().nullable(),
  created_at: col.timestamp().default(Date.now),
  updated_at: col.timestamp().default(Date.now),
};
const integrationModelIndexes = [{ columns: ['integration_id', 'slug'], unique: true }] as const;
/** The table as 0001 created it (its DDL must not change). */
const integrationModelsV1 = defineTable('integration_models', integrationModelColumnsV1, { indexes: integrationModelIndexes });

/** Models of an integration: enabled or not, with a per-model custom host and the model's own prices. */
export const integrationModels = defineTable(
  'integration_models',
  {
    ...integrationModelColumnsV1,
    /** The model's own prices (USD per 1M tokens by kind), in place of its provider's catalogue; null: the catalogue's. */
    pricing: col.json<ModelPrices>().nullable(),
  },
  { indexes: integrationModelIndexes },
);

/** A workspace's provider: its `@slug` names an integration the workspace may use. */
export const workspaceProviders = defineTable(
  'workspace_providers',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    integration_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    note: col.text().nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['integration_id'] }, { columns: ['organisation_id'] }] },
);

/** Legacy: credentials stored per workspace, named by `x-gateway-virtual-key`. */
export const virtualKeys = defineTable(
  'virtual_keys',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    ai_provider_id: col.string(100),
    credentials: col.text(),
    secret_mappings: col.json<SecretMapping[]>().default(() => []),
    note: col.text().nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
    last_reset_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }] },
);

/** Where sealed credentials are bound (crypto.ts): they open only in the row and column they were sealed for. */
export const integrationCredentialsAt = (id: string): SealedAt => ({ table: integrations.name, id, field: 'credentials' });
export const virtualKeyCredentialsAt = (id: string): SealedAt => ({ table: virtualKeys.name, id, field: 'credentials' });

export const integrationMigrations: Migration[] = [
  {
    id: 'integrations/0001-integrations-providers-virtual-keys',
    tables: [integrations, integrationWorkspaces, integrationModelsV1, workspaceProviders, virtualKeys],
  },
  {
    id: 'integrations/0002-integration-model-pricing',
    statements: {
      sqlite: ['ALTER TABLE "integration_models" ADD COLUMN "pricing" TEXT NULL'],
      // MySQL 8 has no ADD COLUMN IF NOT EXISTS: added only when missing, so the statements can run again.
      mysql: [
        "SET @gw_add_column = (SELECT IF(COUNT(*) = 0, 'ALTER TABLE `integration_models` ADD COLUMN `pricing` JSON NULL', 'SELECT 1') " +
          "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'integration_models' AND COLUMN_NAME = 'pricing')",
        'PREPARE gw_add_column FROM @gw_add_column',
        'EXECUTE gw_add_column',
        'DEALLOCATE PREPARE gw_add_column',
      ],
    },
  },
];
