/**
 * Stored provider credentials: what an integration or a virtual key may hold, how it is validated, how it is shown
 * back (masked), and the target it becomes on the hot path. Everything here is sealed at rest as one JSON value
 * `{key?, configurations}`; `secret_mappings` target fields are paths in that value (`key`, `configurations.<field>`).
 */
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { changedDestinations, type DeclaredFields } from '@gateway/admin-kit';
import { Errors, type Json, type PriceMultipliers, type TargetConfig, type TokenKind } from '@gateway/sdk';

/** Bounds on every string an integration stores, unless its provider's declaration sets its own. */
const STRING_BOUNDS = { minLength: 1, maxLength: 4096 } as const;
const bounded = (schema: TSchema): TSchema => (schema.type === 'string' ? ({ ...STRING_BOUNDS, ...schema } as TSchema) : schema);

/**
 * What an integration or a virtual key may hold, from the loaded providers' declarations (`targetFields`): built once
 * when the gateway is ready (index.ts), never per request.
 */
export interface IntegrationFields {
  readonly declared: DeclaredFields;
  /** `configurations`: `custom_host` and every provider's target fields. Closed: an unknown field is a 400. */
  readonly schema: TObject;
  readonly known: ReadonlySet<string>;
}

export function integrationFields(declared: DeclaredFields): IntegrationFields {
  const properties: Record<string, TSchema> = { custom_host: Type.Optional(Type.String(STRING_BOUNDS)) };
  for (const [name, schema] of declared.providerFields) properties[name] = Type.Optional(bounded(schema));
  return { declared, schema: Type.Object(properties, { additionalProperties: false }), known: new Set(Object.keys(properties)) };
}

/** Target fields of the provider, as stored (checked against `IntegrationFields.schema`). */
export type Configurations = { custom_host?: string; [field: string]: unknown };

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

/**
 * The token kinds each stored multiplier scales (README, "Cost"). `request_token` covers embedding tokens too;
 * `cache_read_audio_input_token` and `response_image_token` scale nothing yet: no answer the gateway reads reports
 * cached audio or image output tokens apart.
 */
const MULTIPLIED_KINDS: Readonly<Record<(typeof PRICING_TOKEN_KINDS)[number], readonly TokenKind[]>> = {
  request_token: ['input', 'embedding'],
  response_token: ['output'],
  cache_read_input_token: ['cache_read_input'],
  cache_write_input_token: ['cache_write_input', 'cache_write_input_1h'],
  request_audio_token: ['audio_input'],
  response_audio_token: ['audio_output'],
  cache_read_audio_input_token: [],
  request_image_token: ['image_input'],
  response_image_token: [],
  reasoning_token: ['reasoning'],
  prediction_accepted_token: ['prediction_accepted'],
  prediction_rejected_token: ['prediction_rejected'],
};

/** Stored `pricing_adjustments` as multipliers by token kind; undefined when none is set. */
export function multipliersOf(adjustments: PricingAdjustments | null | undefined): PriceMultipliers | undefined {
  const stored = adjustments?.multiplier;
  if (!stored) return undefined;
  const out: Partial<Record<TokenKind, number>> = {};
  for (const [name, value] of Object.entries(stored) as [(typeof PRICING_TOKEN_KINDS)[number], number | undefined][])
    if (value !== undefined) for (const kind of MULTIPLIED_KINDS[name] ?? []) out[kind] = value;
  return Object.keys(out).length ? out : undefined;
}

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

/** A mapping's target must be `key` or `configurations.<known field>[.<nested>]` (400 naming the mapping otherwise). */
export function checkMappingTargets(mappings: readonly { target_field: string }[], fields: IntegrationFields): void {
  const seen = new Set<string>();
  mappings.forEach((m, i) => {
    const [head, field] = m.target_field.split('.');
    const ok = m.target_field === 'key' || (head === 'configurations' && field !== undefined && fields.known.has(field));
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

/**
 * The credentials as the API shows them: the key and the fields a provider declares secret masked, identifiers (the
 * role ARN, per SPEC.md) in clear.
 */
export function maskCredentials(credentials: Credentials, fields: DeclaredFields): { key: string | null; configurations: Record<string, Json> } {
  const configurations: Record<string, Json> = {};
  for (const [field, value] of Object.entries(credentials.configurations))
    configurations[field] = fields.secret.has(field) ? maskDeep(value) : (value as Json);
  return { key: credentials.key === undefined ? null : maskValue(credentials.key), configurations };
}

/** Where the credentials hold a secret (`key`, `configurations.<field>`): what a GET shows masked. */
export function secretFields(credentials: Credentials, fields: DeclaredFields): string[] {
  const out = credentials.key === undefined ? [] : ['key'];
  for (const field of Object.keys(credentials.configurations)) if (fields.secret.has(field)) out.push(`configurations.${field}`);
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
export function keepMasked(submitted: Configurations, current: Configurations, fields: DeclaredFields): { configurations: Configurations; kept: string[] } {
  const out: Record<string, unknown> = {};
  const kept: string[] = [];
  const stored = current as Record<string, unknown>;
  for (const [field, value] of Object.entries(submitted)) {
    const before = stored[field];
    const keep = fields.secret.has(field) && before !== undefined && sameJson(value, maskDeep(before));
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
 * provider's credentials are sent (its declared `destination`), the key and every `clearedOnChange` field it keeps
 * without the writer entering it (`kept`: sent back masked, or a key left out) is a 400 asking for it again.
 */
export function refuseRedirect(provider: string, before: Configurations, after: Configurations, kept: readonly string[], fields: DeclaredFields): void {
  const cleared = kept.filter((f) => f === 'key' || fields.clearedOnChange.has(f.slice('configurations.'.length)));
  if (cleared.length === 0) return;
  const changed = changedDestinations(before, after, fields.destinationFields(provider));
  if (changed.length === 0) return;
  throw Errors.badRequest(
    `${changed.map((f) => `configurations.${f}`).join(', ')} changed, so the stored ${cleared.join(', ')} is not kept: enter it again (a stored secret is only sent where it was entered for)`,
    cleared[0],
  );
}
