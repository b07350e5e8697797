/**
 * Validation of a reference as written (create, or an update merged over the stored reference): the body's shape per
 * manager kind, then the rules a schema cannot say (exactly one way to grant workspaces, the secret path of the
 * kind, URLs), then what needs a lookup (the workspaces exist in the organisation, the manager URLs pass the host
 * guard). Every failure is a 400 naming the field; nothing is written before all of it passed.
 */
import { type Static, Type } from '@sinclair/typebox';
import { validator } from '@gateway/admin-kit';
import { type Database, Errors, GatewayError, type OutboundGuard, inArray, and, eq, or } from '@gateway/sdk';
import { workspaces } from '@gateway/admin-identity';
import { AUTH_SCHEMAS, MANAGER_TYPES, type ManagerType, SECRET_PATH_RULES, URL_FIELDS } from './kinds.ts';

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,254}$';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const common = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, maxLength: 255 })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
  secret_path: Type.String({ minLength: 1, maxLength: 2048 }),
  secret_key: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 512 }), Type.Null()])),
  allow_all_workspaces: Type.Optional(Type.Boolean()),
  allowed_workspaces: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000 })),
};

const ManagerTypeSchema = Type.Union(MANAGER_TYPES.map((t) => Type.Literal(t)));

/** Used when manager_type is missing or unknown: reports that, and the rest of the body. */
const checkAny = validator(Type.Object({ ...common, manager_type: ManagerTypeSchema, auth_config: Type.Object({}) }, { additionalProperties: false }));

function kindSchema<K extends ManagerType>(kind: K) {
  return Type.Object({ ...common, manager_type: Type.Literal(kind), auth_config: AUTH_SCHEMAS[kind] as (typeof AUTH_SCHEMAS)[K] }, { additionalProperties: false });
}
const kindSchemas = { aws_sm: kindSchema('aws_sm'), azure_kv: kindSchema('azure_kv'), hashicorp_vault: kindSchema('hashicorp_vault') };
export type KindBody = { [K in ManagerType]: Static<(typeof kindSchemas)[K]> }[ManagerType];
const checkKind: Record<ManagerType, (body: unknown) => KindBody> = {
  aws_sm: validator(kindSchemas.aws_sm),
  azure_kv: validator(kindSchemas.azure_kv),
  hashicorp_vault: validator(kindSchemas.hashicorp_vault),
};

/** The update body: every field optional; auth_config is merged over the stored one before the full check. */
export const checkUpdate = validator(
  Type.Object(
    {
      ...common,
      name: Type.Optional(common.name),
      secret_path: Type.Optional(common.secret_path),
      manager_type: Type.Optional(ManagerTypeSchema),
      auth_config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
);
export type UpdateBody = ReturnType<typeof checkUpdate>;

const isManagerType = (value: unknown): value is ManagerType => typeof value === 'string' && (MANAGER_TYPES as readonly string[]).includes(value);

/** A whole reference: the schema of its kind, then the rules the schema cannot say. */
export function checkReference(body: unknown): KindBody {
  const type = body !== null && typeof body === 'object' ? (body as { manager_type?: unknown }).manager_type : undefined;
  if (!isManagerType(type)) {
    checkAny(body);
    throw Errors.badRequest(`manager_type must be one of ${MANAGER_TYPES.join(', ')}`, 'manager_type');
  }
  const ref = checkKind[type](body);
  if (ref.slug && UUID.test(ref.slug)) throw Errors.badRequest('slug must not look like an id', 'slug');

  const all = ref.allow_all_workspaces === true;
  const listed = ref.allowed_workspaces ?? [];
  if (all && listed.length > 0)
    throw Errors.badRequest('Give either allow_all_workspaces: true or a list of allowed_workspaces, not both', 'allowed_workspaces');
  if (!all && listed.length === 0)
    throw Errors.badRequest('Give allow_all_workspaces: true or a non-empty list of allowed_workspaces', 'allowed_workspaces');
  const seen = new Set<string>();
  for (const [i, ws] of listed.entries()) {
    if (seen.has(ws)) throw Errors.badRequest(`allowed_workspaces[${i}] lists ${ws} twice`, `allowed_workspaces[${i}]`);
    seen.add(ws);
  }

  const rule = SECRET_PATH_RULES[ref.manager_type];
  if (!rule.pattern.test(ref.secret_path)) throw Errors.badRequest(`secret_path must be ${rule.meaning}`, 'secret_path');

  const auth = ref.auth_config as Record<string, unknown>;
  for (const field of URL_FIELDS[ref.manager_type]) {
    const value = auth[field];
    if (typeof value === 'string') checkUrl(value, `auth_config.${field}`);
  }
  if (ref.manager_type === 'aws_sm' && ref.auth_config.external_id && !ref.auth_config.role_arn)
    throw Errors.badRequest('external_id is only used with role_arn', 'auth_config.external_id');
  return ref;
}

function checkUrl(value: string, param: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw Errors.badRequest(`${param} is not a valid URL`, param);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw Errors.badRequest(`${param} must be an http or https URL`, param);
  if (url.username || url.password) throw Errors.badRequest(`${param} must not carry credentials`, param);
  if (url.search || url.hash) throw Errors.badRequest(`${param} must not have a query or fragment`, param);
}

/** The manager URLs pass the host guard (private addresses need TRUSTED_CUSTOM_HOSTS): 400 naming the field. */
export async function checkHosts(type: ManagerType, auth: Record<string, unknown>, hostGuard: OutboundGuard | undefined): Promise<void> {
  if (!hostGuard) return;
  for (const field of URL_FIELDS[type]) {
    const value = auth[field];
    if (typeof value !== 'string') continue;
    try {
      await hostGuard.check(value);
    } catch (error) {
      const message = error instanceof GatewayError ? error.message : 'the URL is not allowed';
      throw Errors.badRequest(`auth_config.${field}: ${message}`, `auth_config.${field}`);
    }
  }
}

/** Workspace ids or slugs of the organisation, as ids, in order; 400 naming the entry that is not one. */
export async function resolveWorkspaces(database: Database, organisationId: string, given: readonly string[]): Promise<string[]> {
  if (given.length === 0) return [];
  const rows = await database.select(workspaces, {
    fresh: true,
    where: (c) => and(eq(c.organisation_id, organisationId), or(inArray(c.id, [...given]), inArray(c.slug, [...given]))),
  });
  const ids: string[] = [];
  for (const [i, key] of given.entries()) {
    const row = rows.find((w) => w.id === key) ?? rows.find((w) => w.slug === key);
    if (!row) throw Errors.badRequest(`allowed_workspaces[${i}]: no workspace ${key} in this organisation`, `allowed_workspaces[${i}]`);
    if (row.status !== 'active') throw Errors.badRequest(`allowed_workspaces[${i}]: workspace ${key} is archived`, `allowed_workspaces[${i}]`);
    if (ids.includes(row.id)) throw Errors.badRequest(`allowed_workspaces[${i}] names workspace ${key} twice`, `allowed_workspaces[${i}]`);
    ids.push(row.id);
  }
  return ids;
}
