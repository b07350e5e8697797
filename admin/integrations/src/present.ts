/** Stored rows as the API shows them: credentials masked, times as ISO 8601. */
import { type DeclaredFields, iso, type SealedAt, type SecretBox } from '@gateway/admin-kit';
import type { Row } from '@gateway/sdk';
import { type Credentials, maskCredentials } from './credentials.ts';
import type { integrationModels, integrations, virtualKeys, workspaceProviders } from './tables.ts';

export type IntegrationRow = Row<typeof integrations>;
export type ProviderRow = Row<typeof workspaceProviders>;
export type VirtualKeyRow = Row<typeof virtualKeys>;
export type ModelRow = Row<typeof integrationModels>;

/** Sealed credentials opened for an answer; unreadable ones (another encryption key, another row's) show as absent. */
export function openCredentials(box: SecretBox, sealed: string, at: SealedAt): Credentials | undefined {
  try {
    return box.openJson<Credentials>(sealed, at);
  } catch {
    return undefined;
  }
}

/** The fields that are not credentials: what the audit log keeps. */
export function integrationSummary(row: IntegrationRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    ai_provider_id: row.ai_provider_id,
    description: row.description,
    auth_mode: row.auth_mode,
    secret_mappings: row.secret_mappings,
    pricing_adjustments: row.pricing_adjustments,
    default_provider_slug: row.default_provider_slug,
  };
}

/** The tail integrations and virtual keys share: masked credentials, status and times. */
function credentialFields(row: IntegrationRow | VirtualKeyRow, credentials: Credentials | undefined, fields: DeclaredFields) {
  const masked = credentials ? maskCredentials(credentials, fields) : { key: null, configurations: {} };
  return {
    key: masked.key,
    configurations: masked.configurations,
    credentials_readable: credentials !== undefined,
    status: 'active',
    created_at: iso(row.created_at),
    last_updated_at: iso(row.updated_at),
    last_reset_at: iso(row.last_reset_at),
  };
}

export function presentIntegration(row: IntegrationRow, credentials: Credentials | undefined, fields: DeclaredFields) {
  return { object: 'integration', ...integrationSummary(row), ...credentialFields(row, credentials, fields) };
}

export function presentProvider(row: ProviderRow, integration: Pick<IntegrationRow, 'slug' | 'ai_provider_id'> | undefined) {
  return {
    object: 'provider',
    id: row.id,
    name: row.name,
    slug: row.slug,
    integration_id: row.integration_id,
    integration_slug: integration?.slug ?? null,
    ai_provider_id: integration?.ai_provider_id ?? null,
    workspace_id: row.workspace_id,
    note: row.note,
    status: 'active',
    created_at: iso(row.created_at),
    last_updated_at: iso(row.updated_at),
  };
}

export function virtualKeySummary(row: VirtualKeyRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    provider: row.ai_provider_id,
    workspace_id: row.workspace_id,
    secret_mappings: row.secret_mappings,
    note: row.note,
  };
}

export function presentVirtualKey(row: VirtualKeyRow, credentials: Credentials | undefined, fields: DeclaredFields) {
  return { object: 'virtual-key', ...virtualKeySummary(row), ...credentialFields(row, credentials, fields) };
}

export function presentModel(row: ModelRow) {
  return {
    object: 'integration-model',
    id: row.id,
    slug: row.slug,
    enabled: row.enabled,
    configurations: row.configurations,
    pricing: row.pricing,
    created_at: iso(row.created_at),
    last_updated_at: iso(row.updated_at),
  };
}
