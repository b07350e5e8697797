/**
 * Fields that decide where a stored secret is sent: the host it goes to, or the identity it is used as. A stored
 * secret is only ever sent where it was entered for, so
 * - an update that changes one of them must carry the secret again (a masked placeholder, or leaving the secret out,
 *   does not keep it), and
 * - a request that names a stored target (`@slug`, a virtual key) cannot override them: the stored value wins.
 *
 * The only place these fields are listed. Per provider where they differ; the logic that uses the table never names
 * a provider (issue #14 moves each provider's row into its package). Fields that only choose a path on the same host
 * (`deployment_id`, `deployments`, `api_version`, `svcB_api_version`) or scope an account (`svcD_organization`,
 * `svcD_project`) are not destinations.
 */

/** Every provider: which adapter builds the call, and the base URL that replaces its own. */
const EVERY_PROVIDER = ['provider', 'custom_host'] as const;

/** Azure-style (SPEC.md cloud provider B): the resource or endpoint in the host name, and the Entra identity. */
const AZURE_STYLE = [
  'resource_name',
  'svcB_resource_name',
  'svcB_region',
  'svcB_endpoint_name',
  'svcB_deployment_name',
  'svcB_deployment_type',
  'svcB_entra_tenant_id',
  'svcB_entra_client_id',
  'svcB_entra_scope',
] as const;

/** Provider id → its destination fields beyond EVERY_PROVIDER. */
export const PROVIDER_DESTINATIONS: Readonly<Record<string, readonly string[]>> = {
  'azure-openai': AZURE_STYLE,
  'azure-ai': AZURE_STYLE,
  // AWS-style (A): the region is in the host name; the role (and its external id) is the identity assumed.
  bedrock: ['svcA_region', 'svcA_role_arn', 'svcA_external_id'],
  // Google-style (C): the region is in the host name, the project is where the service account acts.
  'vertex-ai': ['svcC_region', 'svcC_project_id'],
};

/** Parameters of guardrail checks (and hook checks) that name the service the check's secrets are sent to. */
const CHECK_DESTINATIONS = ['webhookURL', 'logURL', 'baseURL', 'apiDomain', 'apiEndpoint', 'customHost', 'resourceName'] as const;

/**
 * Stored documents (saved configs, saved guardrails): a secret's destination is read from the object that holds it
 * and from the ancestors it inherits from through these keys: a config target inherits `custom_host` from its parent
 * (`targets`), and a hook check's `parameters` are sent by the check its `id` names.
 */
export const INHERITED_THROUGH: ReadonlySet<string> = new Set(['targets', 'parameters']);

const byProvider = new Map<string, readonly string[]>();

/** The destination fields of a provider's stored credentials (EVERY_PROVIDER for a provider not in the table). */
export function destinationFields(provider: string): readonly string[] {
  let fields = byProvider.get(provider);
  if (!fields) {
    fields = Object.freeze([...EVERY_PROVIDER, ...(PROVIDER_DESTINATIONS[provider] ?? [])]);
    byProvider.set(provider, fields);
  }
  return fields;
}

/**
 * The destination fields of a stored document, whatever provider or check an object stands for (a config's target
 * may name its provider through a slug or a virtual key; the union costs at most a needless re-entry). `id` is the
 * check a hook check's parameters belong to.
 */
export const DOCUMENT_DESTINATIONS: ReadonlySet<string> = new Set([
  ...EVERY_PROVIDER,
  ...Object.values(PROVIDER_DESTINATIONS).flat(),
  ...CHECK_DESTINATIONS,
  'id',
]);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields among `fields` whose value differs between two objects (a field added or removed counts). */
export function changedDestinations(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>, fields: Iterable<string>): string[] {
  const out: string[] = [];
  for (const field of fields) if (!same(before[field], after[field])) out.push(field);
  return out;
}
