/**
 * Every integration, workspace provider and virtual key, indexed for the hot path. Built in one pass from the
 * tables; credentials are decrypted here, once per load, never per request.
 */
import type { Database, Logger, ModelPrices, PriceMultipliers, TargetConfig } from '@gateway/sdk';
import type { SealedAt, SecretBox, SecretMapping } from '@gateway/admin-kit';
import { type AuthMode, type Credentials, multipliersOf, toTarget } from './credentials.ts';
import {
  integrationCredentialsAt,
  integrationModels,
  integrations,
  integrationWorkspaces,
  virtualKeyCredentialsAt,
  virtualKeys,
  workspaceProviders,
} from './tables.ts';

export interface ModelEntry {
  slug: string;
  enabled: boolean;
  customHost: string | undefined;
  /** The integration's target with this model's custom host, when it has one. */
  target: Readonly<TargetConfig> | undefined;
  /** The model's own prices, in place of its provider's catalogue. */
  prices: ModelPrices | undefined;
  /** When the model was added (ms): `created` in the model list. */
  createdAt: number;
}

export interface IntegrationEntry {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  provider: string;
  authMode: AuthMode | null;
  /** Undefined when the stored credentials could not be decrypted (another GATEWAY_ENCRYPTION_KEY). */
  credentials: Readonly<Credentials> | undefined;
  target: Readonly<TargetConfig> | undefined;
  mappings: readonly SecretMapping[];
  /** Workspace id → enabled. */
  workspaces: ReadonlyMap<string, boolean>;
  models: ReadonlyMap<string, ModelEntry>;
  /** `pricing_adjustments.multiplier` by token kind, applied over the model's prices. */
  multiplier: PriceMultipliers | undefined;
}

export interface ProviderEntry {
  id: string;
  organisationId: string;
  workspaceId: string;
  name: string;
  slug: string;
  integration: IntegrationEntry;
}

export interface VirtualKeyEntry {
  id: string;
  organisationId: string;
  workspaceId: string;
  slug: string;
  provider: string;
  credentials: Readonly<Credentials> | undefined;
  target: Readonly<TargetConfig> | undefined;
  mappings: readonly SecretMapping[];
}

export interface StoredSet {
  integrations: ReadonlyMap<string, IntegrationEntry>;
  /** `<organisation>\n<slug>` → integration. */
  integrationsBySlug: ReadonlyMap<string, IntegrationEntry>;
  /** `<workspace>\n<slug>` → provider. */
  providers: ReadonlyMap<string, ProviderEntry>;
  /** `<organisation>\n<slug>` of every provider slug in use in some workspace: tells "no access" from "unknown". */
  providerSlugsInOrg: ReadonlySet<string>;
  providersByWorkspace: ReadonlyMap<string, readonly ProviderEntry[]>;
  virtualKeys: ReadonlyMap<string, VirtualKeyEntry>;
  /** `<workspace>\n<slug>` → virtual key. */
  virtualKeysBySlug: ReadonlyMap<string, VirtualKeyEntry>;
  virtualKeySlugsInOrg: ReadonlySet<string>;
}

export const key = (scope: string, slug: string): string => `${scope}\n${slug}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Opens sealed credentials; a value that does not open (another key, or sealed for another row) is logged (without
 * its content) and left out: calls through it fail, they never use another row's secret.
 */
function opener(box: SecretBox, logger: Logger | undefined) {
  return (sealed: string, at: SealedAt, what: string): Credentials | undefined => {
    try {
      return deepFreeze(box.openJson<Credentials>(sealed, at));
    } catch {
      logger?.error({ stored: what }, 'stored credentials cannot be decrypted: was GATEWAY_ENCRYPTION_KEY changed, or were they copied from another row?');
      return undefined;
    }
  };
}

export async function loadStoredSet(database: Database, box: SecretBox, logger?: Logger): Promise<StoredSet> {
  const fresh = { fresh: true } as const;
  const [integrationRows, accessRows, modelRows, providerRows, keyRows] = await Promise.all([
    database.select(integrations, fresh),
    database.select(integrationWorkspaces, fresh),
    database.select(integrationModels, fresh),
    database.select(workspaceProviders, fresh),
    database.select(virtualKeys, fresh),
  ]);
  const open = opener(box, logger);

  const access = new Map<string, Map<string, boolean>>();
  for (const row of accessRows) {
    const map = access.get(row.integration_id) ?? new Map<string, boolean>();
    map.set(row.workspace_id, row.enabled);
    access.set(row.integration_id, map);
  }
  const modelsOf = new Map<string, typeof modelRows>();
  for (const row of modelRows) {
    const list = modelsOf.get(row.integration_id);
    if (list) list.push(row);
    else modelsOf.set(row.integration_id, [row]);
  }

  const byId = new Map<string, IntegrationEntry>();
  const bySlug = new Map<string, IntegrationEntry>();
  for (const row of integrationRows) {
    const credentials = open(row.credentials, integrationCredentialsAt(row.id), `integration ${row.id}`);
    const target = credentials ? deepFreeze(toTarget(row.ai_provider_id, credentials, (row.auth_mode as AuthMode | null) ?? null)) : undefined;
    const models = new Map<string, ModelEntry>();
    for (const m of modelsOf.get(row.id) ?? []) {
      const customHost = m.configurations?.custom_host;
      models.set(m.slug, {
        slug: m.slug,
        enabled: m.enabled,
        customHost,
        target: target && customHost ? deepFreeze({ ...target, custom_host: customHost }) : undefined,
        prices: m.pricing ?? undefined,
        createdAt: m.created_at,
      });
    }
    const entry: IntegrationEntry = {
      id: row.id,
      organisationId: row.organisation_id,
      name: row.name,
      slug: row.slug,
      provider: row.ai_provider_id,
      authMode: (row.auth_mode as AuthMode | null) ?? null,
      credentials,
      target,
      mappings: row.secret_mappings ?? [],
      workspaces: access.get(row.id) ?? new Map(),
      models,
      multiplier: multipliersOf(row.pricing_adjustments),
    };
    byId.set(row.id, entry);
    bySlug.set(key(row.organisation_id, row.slug), entry);
  }

  const providers = new Map<string, ProviderEntry>();
  const providerSlugsInOrg = new Set<string>();
  const providersByWorkspace = new Map<string, ProviderEntry[]>();
  for (const row of providerRows) {
    const integration = byId.get(row.integration_id);
    if (!integration) continue; // its integration is being deleted in the same change
    const entry: ProviderEntry = { id: row.id, organisationId: row.organisation_id, workspaceId: row.workspace_id, name: row.name, slug: row.slug, integration };
    providers.set(key(row.workspace_id, row.slug), entry);
    providerSlugsInOrg.add(key(row.organisation_id, row.slug));
    const list = providersByWorkspace.get(row.workspace_id);
    if (list) list.push(entry);
    else providersByWorkspace.set(row.workspace_id, [entry]);
  }

  const keysById = new Map<string, VirtualKeyEntry>();
  const keysBySlug = new Map<string, VirtualKeyEntry>();
  const keySlugsInOrg = new Set<string>();
  for (const row of keyRows) {
    const credentials = open(row.credentials, virtualKeyCredentialsAt(row.id), `virtual key ${row.id}`);
    const entry: VirtualKeyEntry = {
      id: row.id,
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      slug: row.slug,
      provider: row.ai_provider_id,
      credentials,
      target: credentials ? deepFreeze(toTarget(row.ai_provider_id, credentials)) : undefined,
      mappings: row.secret_mappings ?? [],
    };
    keysById.set(row.id, entry);
    keysBySlug.set(key(row.workspace_id, row.slug), entry);
    keySlugsInOrg.add(key(row.organisation_id, row.slug));
  }

  return {
    integrations: byId,
    integrationsBySlug: bySlug,
    providers,
    providerSlugsInOrg,
    providersByWorkspace,
    virtualKeys: keysById,
    virtualKeysBySlug: keysBySlug,
    virtualKeySlugsInOrg: keySlugsInOrg,
  };
}
