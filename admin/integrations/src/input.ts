/** Checks shared by integrations and virtual keys, all made before anything is written. */
import type { SecretMapping } from '@gateway/admin-kit';
import { Errors } from '@gateway/sdk';
import type { Ctx } from './context.ts';
import {
  type AuthMode,
  checkCredentials,
  checkMappingTargets,
  type Configurations,
  type Credentials,
  type IntegrationFields,
  keepMasked,
  keepMaskedKey,
  refuseRedirect,
} from './credentials.ts';

/** A loaded provider's id; 400 naming `param` otherwise. */
export function checkProvider(ctx: Ctx, id: string, param: string): void {
  const ids = ctx.providerIds();
  if (ids ? !ids.has(id) : !/^[a-z0-9][a-z0-9-]{0,99}$/.test(id))
    throw Errors.badRequest(`${param}: "${id.slice(0, 100)}" is not a provider this gateway has loaded`, param);
}

/** Secret mappings: well-formed targets, then the secret-references service's own check (existence, workspace access). */
export async function checkMappings(
  ctx: Ctx,
  organisationId: string,
  workspaces: readonly string[] | 'all',
  mappings: readonly SecretMapping[],
): Promise<void> {
  if (mappings.length === 0) return;
  checkMappingTargets(mappings, ctx.fields());
  const resolver = ctx.secrets();
  if (!resolver) throw Errors.badRequest('secret references are not available on this gateway', 'secret_mappings');
  await resolver.check(organisationId, workspaces, mappings);
}

export interface CredentialInput {
  key?: string | null;
  configurations?: Configurations;
}

/**
 * The credentials to store: the input over the current ones (an update; masked values sent back keep the stored
 * secret, unless where it is sent changes), checked for the provider and auth mode; `fields`: what the loaded
 * providers declare.
 */
export function buildCredentials(
  provider: string,
  input: CredentialInput,
  current: Credentials | undefined,
  authMode: AuthMode | null,
  mappings: readonly SecretMapping[],
  fields: IntegrationFields,
): Credentials {
  let configurations = input.configurations ?? current?.configurations ?? {};
  let key = input.key ?? undefined;
  if (current) {
    const kept = input.configurations === undefined ? { configurations, kept: [] } : keepMasked(input.configurations, current.configurations, fields.declared);
    configurations = kept.configurations;
    key = keepMaskedKey(input.key, current.key);
    // The key is kept unless the writer typed it (the same value counts: whoever types it knows it).
    const keyKept = key !== undefined && key === current.key && input.key !== current.key;
    refuseRedirect(provider, current.configurations, configurations, [...(keyKept ? ['key'] : []), ...kept.kept.map((f) => `configurations.${f}`)], fields.declared);
  }
  checkCredentials(provider, configurations, authMode, new Set(mappings.map((m) => m.target_field)));
  return key === undefined ? { configurations } : { key, configurations };
}
