/**
 * Stored provider credentials: what an integration or a virtual key may hold, how it is validated, how it is shown
 * back (masked), and the target it becomes on the hot path. Everything here is sealed at rest as one JSON value
 * `{key?, configurations}`; `secret_mappings` target fields are paths in that value (`key`, `configurations.<field>`).
 */
import { type Static, Type } from '@sinclair/typebox';
import { changedDestinations, destinationFields } from '@gateway/admin-kit';
import { Errors, type Json, type TargetConfig } from '@gateway/sdk';

const Str = (options: { minLength?: number; maxLength?: number; pattern?: string } = {}) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 4096, ...options }));

/** AWS IAM role ARN (`arn:aws:iam::123456789012:role/name`, partitions aws, aws-cn, aws-us-gov). */
export const ROLE_ARN = '^arn:aws(-[a-z]+)*:iam::\\d{12}:role/[\\w+=,.@/-]{1,512}$';

/**
 * Provider credential fields: the TargetConfig fields of SPEC.md's cloud providers A (AWS-style), B (Azure-style),
 * C (Google-style), D (OpenAI organisation/project), plus `custom_host`. Closed: an unknown field is a 400.
 */
export const ConfigurationsSchema = Type.Object(
  {
    custom_host: Str(),
    resource_name: Str(),
    deployment_id: Str(),
    api_version: Str(),
    deployments: Type.Optional(
      Type.Array(
        Type.Object(
          { deployment_id: Type.String(), alias: Type.String(), api_version: Type.String(), is_default: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
      ),
    ),
    svcA_access_key_id: Str(),
    svcA_secret_access_key: Str(),
    svcA_session_token: Str(),
    svcA_region: Str(),
    svcA_role_arn: Str({ pattern: ROLE_ARN }),
    svcA_external_id: Str(),
    svcB_region: Str(),
    svcB_deployment_name: Str(),
    svcB_endpoint_name: Str(),
    svcB_api_version: Str(),
    svcB_deployment_type: Type.Optional(Type.Union([Type.Literal('serverless'), Type.Literal('managed')])),
    svcB_entra_scope: Str(),
    svcB_entra_tenant_id: Str(),
    svcB_entra_client_id: Str(),
    svcB_entra_client_secret: Str(),
    svcB_resource_name: Str(),
    svcB_deployment_id: Str(),
    svcB_model_name: Str(),
    svcC_project_id: Str(),
    svcC_region: Str(),
    svcC_service_account_json: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    svcD_organization: Str(),
    svcD_project: Str(),
  },
  { additionalProperties: false },
);
export type Configurations = Static<typeof ConfigurationsSchema>;

/** Identifiers, not secrets: shown in clear. Every other configuration value is masked (the role ARN per SPEC.md). */
const CLEAR_FIELDS = new Set<string>([
  'custom_host',
  'resource_name',
  'deployment_id',
  'api_version',
  'deployments',
  'svcA_region',
  'svcA_role_arn',
  'svcB_region',
  'svcB_deployment_name',
  'svcB_endpoint_name',
  'svcB_api_version',
  'svcB_deployment_type',
  'svcB_entra_scope',
  'svcB_entra_tenant_id',
  'svcB_entra_client_id',
  'svcB_resource_name',
  'svcB_deployment_id',
  'svcB_model_name',
  'svcC_project_id',
  'svcC_region',
  'svcD_organization',
  'svcD_project',
]);

export const PRICING_TOKEN_KINDS = [
  'request_token',
  'response_token',
  'cache_read_input_token',
  'cache_write_input_token',
  'request_audio_token',
  'response_audio_token',
  'cache_read_audio_input_token',
  'request_image_token',
  'response_image_token',
  'reasoning_token',
  'prediction_accepted_token',
  'prediction_rejected_token',
] as const;

export const PricingAdjustmentsSchema = Type.Object(
  {
    multiplier: Type.Object(
      Object.fromEntries(PRICING_TOKEN_KINDS.map((kind) => [kind, Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1000 }))])),
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type PricingAdjustments = { multiplier: Partial<Record<(typeof PRICING_TOKEN_KINDS)[number], number>> };

export const SecretMappingSchema = Type.Object(
  {
    target_field: Type.String({ minLength: 1, maxLength: 255 }),
    secret_reference_id: Type.String({ minLength: 1, maxLength: 255 }),
    secret_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    value_format: Type.Optional(Type.Union([Type.Literal('string'), Type.Literal('json')])),
  },
  { additionalProperties: false },
);

/** What is sealed. */
export interface Credentials {
  key?: string;
  configurations: Configurations;
}

const CONFIG_FIELDS = new Set(Object.keys(ConfigurationsSchema.properties));

/** A mapping's target must be `key` or `configurations.<known field>[.<nested>]` (400 naming the mapping otherwise). */
export function checkMappingTargets(mappings: readonly { target_field: string }[]): void {
  const seen = new Set<string>();
  mappings.forEach((m, i) => {
    const [head, field] = m.target_field.split('.');
    const ok = m.target_field === 'key' || (head === 'configurations' && field !== undefined && CONFIG_FIELDS.has(field));
    if (!ok)
      throw Errors.badRequest(
        `secret_mappings[${i}].target_field must be "key" or "configurations.<field>" with a known configuration field`,
        `secret_mappings[${i}].target_field`,
      );
    if (seen.has(m.target_field)) throw Errors.badRequest(`secret_mappings[${i}].target_field ${m.target_field} is mapped twice`, `secret_mappings[${i}].target_field`);
    seen.add(m.target_field);
  });
}

/** An http(s) URL, or a 400 naming `param`. */
export function checkUrl(value: string, param: string): void {
  if (!URL.canParse(value)) throw Errors.badRequest(`${param} must be a valid URL`, param);
  const { protocol, hostname } = new URL(value);
  if ((protocol !== 'https:' && protocol !== 'http:') || hostname === '') throw Errors.badRequest(`${param} must be an http(s) URL`, param);
}

export const AUTH_MODES = ['entraFederated'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
/** Cloud provider B (Azure-style) providers: the ones `auth_mode: entraFederated` applies to. */
const AZURE_PROVIDERS = new Set(['azure-openai', 'azure-ai']);

/** Cross-field rules of a credential set for a provider. */
export function checkCredentials(provider: string, configurations: Configurations, authMode: AuthMode | null, mappedFields: ReadonlySet<string>): void {
  if (configurations.custom_host !== undefined) checkUrl(configurations.custom_host, 'configurations.custom_host');
  if (authMode === 'entraFederated') {
    if (!AZURE_PROVIDERS.has(provider))
      throw Errors.badRequest(`auth_mode entraFederated applies to ${[...AZURE_PROVIDERS].join(' and ')} integrations only`, 'auth_mode');
    for (const field of ['svcB_entra_tenant_id', 'svcB_entra_client_id'] as const)
      if (configurations[field] === undefined && !mappedFields.has(`configurations.${field}`))
        throw Errors.badRequest(`auth_mode entraFederated needs configurations.${field}`, `configurations.${field}`);
    if (configurations.svcB_entra_client_secret !== undefined || mappedFields.has('configurations.svcB_entra_client_secret'))
      throw Errors.badRequest('auth_mode entraFederated takes no client secret: the token comes from the federated identity', 'configurations.svcB_entra_client_secret');
  }
}

/** Values shorter than this are masked whole. */
export const MASK_TAIL_FROM = 16;

/**
 * `****abcd`: the last 4 characters of a value of MASK_TAIL_FROM characters or more, enough to tell keys apart and
 * never enough to use one; shorter values are `****` alone. Nothing else of a secret is ever shown.
 */
export function maskValue(value: string): string {
  return value.length < MASK_TAIL_FROM ? '****' : `****${value.slice(-4)}`;
}

function maskDeep(value: unknown): Json {
  if (typeof value === 'string') return maskValue(value);
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v)]));
  return value as Json;
}

/** The credentials as the API shows them: secrets masked, identifiers (and the role ARN) in clear. */
export function maskCredentials(credentials: Credentials): { key: string | null; configurations: Record<string, Json> } {
  const configurations: Record<string, Json> = {};
  for (const [field, value] of Object.entries(credentials.configurations))
    configurations[field] = CLEAR_FIELDS.has(field) ? (value as Json) : maskDeep(value);
  return { key: credentials.key === undefined ? null : maskValue(credentials.key), configurations };
}

/** Where the credentials hold a secret (`key`, `configurations.<field>`): what a GET shows masked. */
export function secretFields(credentials: Credentials): string[] {
  const out = credentials.key === undefined ? [] : ['key'];
  for (const field of Object.keys(credentials.configurations)) if (!CLEAR_FIELDS.has(field)) out.push(`configurations.${field}`);
  return out;
}

/**
 * The target a request runs with: the configurations as target fields, the key as `api_key`, and an `entraFederated`
 * integration's mode as `svcB_entra_auth_mode` (a field only stored targets carry: the config schema refuses it).
 */
export function toTarget(provider: string, credentials: Credentials, authMode: AuthMode | null = null): TargetConfig {
  const target = { ...credentials.configurations, provider } as TargetConfig & { svcB_entra_auth_mode?: AuthMode };
  if (credentials.key !== undefined) target.api_key = credentials.key;
  if (authMode === 'entraFederated') target.svcB_entra_auth_mode = authMode;
  return target;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * An update's configurations replace the stored ones, except that a masked value sent back unchanged (as a GET shows
 * it) keeps the stored secret: a client may PUT what it read. `kept` names the fields kept that way.
 */
export function keepMasked(submitted: Configurations, current: Configurations): { configurations: Configurations; kept: string[] } {
  const out: Record<string, unknown> = {};
  const kept: string[] = [];
  const stored = current as Record<string, unknown>;
  for (const [field, value] of Object.entries(submitted)) {
    const before = stored[field];
    const keep = !CLEAR_FIELDS.has(field) && before !== undefined && sameJson(value, maskDeep(before));
    out[field] = keep ? before : value;
    if (keep) kept.push(field);
  }
  return { configurations: out as Configurations, kept };
}

/** The stored key, kept when the masked form is sent back or the key is left out; null removes it. */
export function keepMaskedKey(submitted: string | null | undefined, current: string | undefined): string | undefined {
  if (submitted === undefined) return current;
  if (submitted === null) return undefined;
  return current !== undefined && submitted === maskValue(current) ? current : submitted;
}

/**
 * A stored secret goes only where it was entered for: when an update changes a field that decides where the
 * provider's credentials are sent (secret-destinations.ts), every secret it keeps without the writer entering it
 * (`kept`: sent back masked, or a key left out) is a 400 asking for it again.
 */
export function refuseRedirect(provider: string, before: Configurations, after: Configurations, kept: readonly string[]): void {
  if (kept.length === 0) return;
  const changed = changedDestinations(before, after, destinationFields(provider));
  if (changed.length === 0) return;
  throw Errors.badRequest(
    `${changed.map((f) => `configurations.${f}`).join(', ')} changed, so the stored ${kept.join(', ')} is not kept: enter it again (a stored secret is only sent where it was entered for)`,
    kept[0],
  );
}
