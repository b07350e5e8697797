/**
 * Service `storedAccess` (the server's StoredAccess): `@slug` providers and virtual keys answered from the in-memory
 * set, synchronously; a promise only when secret mappings must be resolved (the secret-references service caches
 * them briefly). A workspace without access gets a 403; a name nobody in the organisation uses is unknown (the
 * server answers its unknown-provider / unknown-virtual-key 400).
 */
import { type Caller, Errors, type GatewayError, type Json, type TargetConfig } from '@gateway/sdk';
import { type SecretMapping, type SecretResolver, setPath } from '@gateway/admin-kit';
import { type AuthMode, type Credentials, toTarget } from './credentials.ts';
import { type IntegrationEntry, key, type StoredSet } from './stored-set.ts';

type MaybePromise<T> = T | Promise<T>;

export interface StoredAccessDeps {
  current(): StoredSet;
  /** The secret-references service, when loaded. */
  secrets(): SecretResolver | undefined;
}

function undecryptable(what: string): GatewayError {
  return Errors.internal(`The stored credentials of ${what} cannot be decrypted (was GATEWAY_ENCRYPTION_KEY changed, or were they copied from another row?)`);
}

/** Credentials with the mapped secrets written in, as a target. */
function withSecrets(
  deps: StoredAccessDeps,
  caller: Caller,
  provider: string,
  credentials: Readonly<Credentials>,
  mappings: readonly SecretMapping[],
  customHost: string | undefined,
  authMode: AuthMode | null = null,
): Promise<TargetConfig> {
  const resolver = deps.secrets();
  if (!resolver) return Promise.reject(Errors.internal('This provider uses secret references, which are not available on this gateway'));
  return resolver.resolve(caller.organisationId, caller.workspaceId, mappings).then((values) => {
    const copy = structuredClone(credentials) as unknown as Record<string, Json>;
    for (const mapping of mappings) {
      const value = values[mapping.target_field];
      if (value !== undefined) setPath(copy, mapping.target_field, value);
    }
    const target = toTarget(provider, copy as unknown as Credentials, authMode);
    return customHost ? { ...target, custom_host: customHost } : target;
  });
}

/** The integration a workspace reaches by `@slug`: its provider of that slug, else an integration slug it may use. */
function integrationFor(set: StoredSet, slug: string, caller: Caller): IntegrationEntry | undefined {
  const provider = set.providers.get(key(caller.workspaceId, slug));
  if (provider && provider.organisationId === caller.organisationId) {
    if (provider.integration.workspaces.get(caller.workspaceId) !== true)
      throw Errors.forbidden(`This workspace no longer has access to the integration behind @${slug}`);
    return provider.integration;
  }
  const integration = set.integrationsBySlug.get(key(caller.organisationId, slug));
  if (integration?.workspaces.get(caller.workspaceId) === true) return integration;
  if (integration || set.providerSlugsInOrg.has(key(caller.organisationId, slug)))
    throw Errors.forbidden(`This workspace has no access to the provider @${slug}`);
  return undefined;
}

export function createStoredAccess(deps: StoredAccessDeps) {
  return {
    providerSlug(slug: string, caller: Caller, model?: string): MaybePromise<{ provider: string; target: TargetConfig; integrationId: string } | undefined> {
      const integration = integrationFor(deps.current(), slug, caller);
      if (!integration) return undefined;
      if (!integration.credentials || !integration.target) throw undecryptable(`@${slug}`);
      const m = model === undefined ? undefined : integration.models.get(model);
      if (m && !m.enabled) throw Errors.forbidden(`The model ${model} is not enabled for @${slug}`);
      if (integration.mappings.length > 0)
        return withSecrets(deps, caller, integration.provider, integration.credentials, integration.mappings, m?.customHost, integration.authMode).then((target) => ({
          provider: integration.provider,
          target,
          integrationId: integration.id,
        }));
      return { provider: integration.provider, target: m?.target ?? integration.target, integrationId: integration.id };
    },

    /** By slug in the caller's workspace, or by id. */
    virtualKey(id: string, caller: Caller): MaybePromise<TargetConfig | undefined> {
      const set = deps.current();
      const found = set.virtualKeysBySlug.get(key(caller.workspaceId, id)) ?? set.virtualKeys.get(id);
      if (!found || found.organisationId !== caller.organisationId) {
        if (set.virtualKeySlugsInOrg.has(key(caller.organisationId, id))) throw Errors.forbidden('This workspace has no access to that virtual key');
        return undefined;
      }
      if (found.workspaceId !== caller.workspaceId) throw Errors.forbidden('This workspace has no access to that virtual key');
      if (!found.credentials || !found.target) throw undecryptable('the virtual key');
      if (found.mappings.length > 0) return withSecrets(deps, caller, found.provider, found.credentials, found.mappings, undefined);
      return found.target;
    },
  };
}

export type IntegrationStoredAccess = ReturnType<typeof createStoredAccess>;
