/**
 * The three kinds of secret manager, each with its auth config: the fields it needs, which of them are credentials
 * (sealed at rest, masked in answers), which are URLs (checked before any request), and how a secret path looks.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Errors } from '@gateway/sdk';

export const MANAGER_TYPES = ['aws_sm', 'azure_kv', 'hashicorp_vault'] as const;
export type ManagerType = (typeof MANAGER_TYPES)[number];

/** What every answer shows in place of a credential. */
export const MASK = '********';

const text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const url = () => Type.String({ minLength: 1, maxLength: 2048 });
/** An AWS region name: it goes into a host name. */
const REGION = '^[a-z]{2}(-[a-z]+)+-\\d{1,2}$';
const VAULT_SEGMENTS = '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$';

/** AWS Secrets Manager: GetSecretValue, SigV4-signed with an access key (optionally assuming a role first). */
export const AwsAuth = Type.Object(
  {
    region: Type.String({ pattern: REGION, maxLength: 32 }),
    access_key_id: Type.String({ pattern: '^[A-Z0-9]{16,128}$' }),
    secret_access_key: text(1024),
    /** For temporary credentials. */
    session_token: Type.Optional(text(8192)),
    /** Assume this role (STS AssumeRole, signed with the keys above) and read the secret as the role. */
    role_arn: Type.Optional(Type.String({ pattern: '^arn:aws[a-z-]*:iam::\\d{12}:role/[\\w+=,.@/-]{1,512}$' })),
    external_id: Type.Optional(Type.String({ minLength: 2, maxLength: 1224, pattern: '^[\\w+=,.@:/-]+$' })),
    /** Secrets Manager endpoint; default https://secretsmanager.<region>.amazonaws.com. */
    endpoint: Type.Optional(url()),
    /** STS endpoint for role_arn; default https://sts.<region>.amazonaws.com. */
    sts_endpoint: Type.Optional(url()),
  },
  { additionalProperties: false },
);

/** Azure Key Vault: Get Secret with a bearer token from the Microsoft Entra client-credentials flow. */
export const AzureAuth = Type.Object(
  {
    vault_url: url(),
    tenant_id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.-]{0,253}$' }),
    client_id: text(255),
    client_secret: text(1024),
    /** Default https://login.microsoftonline.com. */
    authority_host: Type.Optional(url()),
  },
  { additionalProperties: false },
);

/** HashiCorp Vault, KV secrets engine version 2, token auth. */
export const VaultAuth = Type.Object(
  {
    address: url(),
    token: text(4096),
    /** The KV v2 mount path; default `secret`. */
    mount: Type.Optional(Type.String({ pattern: VAULT_SEGMENTS, maxLength: 255 })),
    /** Vault Enterprise namespace (X-Vault-Namespace). */
    namespace: Type.Optional(Type.String({ pattern: VAULT_SEGMENTS, maxLength: 255 })),
  },
  { additionalProperties: false },
);

export type AwsAuthConfig = Static<typeof AwsAuth>;
export type AzureAuthConfig = Static<typeof AzureAuth>;
export type VaultAuthConfig = Static<typeof VaultAuth>;
export type AuthConfig = AwsAuthConfig | AzureAuthConfig | VaultAuthConfig;

export const AUTH_SCHEMAS = { aws_sm: AwsAuth, azure_kv: AzureAuth, hashicorp_vault: VaultAuth } as const;

/** Credentials: never shown, never in the audit log. */
export const SECRET_FIELDS: Record<ManagerType, readonly string[]> = {
  aws_sm: ['secret_access_key', 'session_token'],
  azure_kv: ['client_secret'],
  hashicorp_vault: ['token'],
};

/** Identifiers of a credential: shown by their ends only (`AKIA…WXYZ`). */
export const HINTED_FIELDS: Record<ManagerType, readonly string[]> = {
  aws_sm: ['access_key_id'],
  azure_kv: [],
  hashicorp_vault: [],
};

/** URLs an admin gives: http(s), checked with the host guard at write time and before every request. */
export const URL_FIELDS: Record<ManagerType, readonly string[]> = {
  aws_sm: ['endpoint', 'sts_endpoint'],
  azure_kv: ['vault_url', 'authority_host'],
  hashicorp_vault: ['address'],
};

/**
 * Fields that decide where the credentials are sent: the URLs, and what goes into a default host name or token
 * endpoint (the AWS region, the Entra tenant). Changing one means entering the credentials again (docs/security.md).
 */
export const DESTINATION_FIELDS: Record<ManagerType, readonly string[]> = {
  aws_sm: ['region', ...URL_FIELDS.aws_sm],
  azure_kv: ['tenant_id', ...URL_FIELDS.azure_kv],
  hashicorp_vault: [...URL_FIELDS.hashicorp_vault],
};

/** Defaults written into the stored config, so that answers show them. */
export function withDefaults(type: ManagerType, config: Record<string, unknown>): Record<string, unknown> {
  if (type === 'hashicorp_vault') return { ...config, mount: config.mount ?? 'secret' };
  return config;
}

/** Where a secret lives, per kind: a rule and what it means, for the 400. */
export const SECRET_PATH_RULES: Record<ManagerType, { pattern: RegExp; meaning: string }> = {
  // A secret name or a full ARN.
  aws_sm: { pattern: /^[A-Za-z0-9/_+=.@:!-]{1,2048}$/, meaning: 'a secret name or ARN' },
  // name, or name/version (the version id Key Vault gives, 32 hex characters).
  azure_kv: { pattern: /^[0-9A-Za-z-]{1,127}(\/[0-9A-Za-z]{1,64})?$/, meaning: 'a Key Vault secret name (letters, digits, dashes), optionally /<version>' },
  // A path under the mount, without leading slash or dot segments.
  hashicorp_vault: { pattern: /^(?!\.{1,2}(\/|$))(?!.*\/\.{1,2}(\/|$))[\w.@+=:,-]+(\/[\w.@+=:,-]+)*$/, meaning: 'a KV path under the mount, like team/openai' },
};

export function maskHint(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 4)}…${value.slice(-4)}` : MASK;
}

/** The auth config as answers and audit entries show it: credentials masked. */
export function maskAuth(type: ManagerType, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const field of SECRET_FIELDS[type]) if (typeof out[field] === 'string') out[field] = MASK;
  for (const field of HINTED_FIELDS[type]) if (typeof out[field] === 'string') out[field] = maskHint(out[field] as string);
  return out;
}

/**
 * An update's auth config over the stored one (same kind): a field left out keeps its value, a field sent back in
 * its masked form keeps its value, `null` removes an optional field. A stored credential is kept only while it
 * goes where it was entered for: when a destination field changes, every stored credential must be sent anew (400
 * otherwise), or a writer could point the endpoint at their own server and receive it on the next read.
 */
export function mergeAuth(type: ManagerType, stored: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown> {
  const masked = maskAuth(type, stored);
  const out: Record<string, unknown> = { ...stored };
  const kept: string[] = [];
  for (const [field, value] of Object.entries(update)) {
    if (value === null) delete out[field];
    else if (value === masked[field] && stored[field] !== undefined && (SECRET_FIELDS[type].includes(field) || HINTED_FIELDS[type].includes(field))) continue;
    else out[field] = value;
  }
  const moved = DESTINATION_FIELDS[type].filter((field) => out[field] !== stored[field]);
  if (moved.length === 0) return out;
  for (const field of SECRET_FIELDS[type]) if (stored[field] !== undefined && out[field] === stored[field] && update[field] !== stored[field]) kept.push(field);
  const [first] = kept;
  if (first !== undefined)
    throw Errors.badRequest(
      `auth_config: ${moved.join(', ')} changed, so the stored ${kept.join(', ')} is not kept: enter it again (a stored credential is only sent where it was entered for)`,
      `auth_config.${first}`,
    );
  return out;
}
