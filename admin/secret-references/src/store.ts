/** Reading stored references, and the shape answers and audit entries show (credentials masked). */
import { iso, type SealedAt, type SecretBox } from '@gateway/admin-kit';
import { and, type Database, eq, Errors, type ReadOptions, type TransactionHelpers } from '@gateway/sdk';
import { type AuthConfig, maskAuth } from './kinds.ts';
import { type SecretReferenceRow, secretReferences } from './tables.ts';

/** A reference by id, or by slug within the organisation; undefined when the organisation has no such reference. */
export async function findReference(
  db: Database | TransactionHelpers,
  organisationId: string,
  idOrSlug: string,
  options: ReadOptions = {},
): Promise<SecretReferenceRow | undefined> {
  const byId = await db.findOne(secretReferences, 'id', idOrSlug, options);
  if (byId) return byId.organisation_id === organisationId ? byId : undefined;
  const [bySlug] = await db.select(secretReferences, {
    ...options,
    where: (c) => and(eq(c.organisation_id, organisationId), eq(c.slug, idOrSlug)),
    limit: 1,
  });
  return bySlug;
}

/** Where a reference's sealed login is bound (admin-kit crypto.ts): it opens only in its own row and column. */
export const authConfigAt = (id: string): SealedAt => ({ table: secretReferences.name, id, field: 'auth_config' });

/** The login, opened; a 500 (`internal`, details in the log) when it was sealed under another key or for another row. */
export function openAuth(box: SecretBox, row: SecretReferenceRow): AuthConfig {
  try {
    return box.openJson<AuthConfig>(row.auth_config, authConfigAt(row.id));
  } catch (error) {
    throw Errors.internal(`The stored login of secret reference ${row.id} cannot be decrypted`, error);
  }
}

export interface SecretReferenceView {
  id: string;
  object: 'secret_reference';
  organisation_id: string;
  name: string;
  slug: string;
  description: string | null;
  manager_type: SecretReferenceRow['manager_type'];
  auth_config: Record<string, unknown>;
  secret_path: string;
  secret_key: string | null;
  allow_all_workspaces: boolean;
  allowed_workspaces: string[];
  created_at: string | null;
  updated_at: string | null;
}

/** The answer's shape: the auth config opened and masked. */
export function view(box: SecretBox, row: SecretReferenceRow): SecretReferenceView {
  return {
    id: row.id,
    object: 'secret_reference',
    organisation_id: row.organisation_id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    manager_type: row.manager_type,
    auth_config: maskAuth(row.manager_type, openAuth(box, row) as Record<string, unknown>),
    secret_path: row.secret_path,
    secret_key: row.secret_key,
    allow_all_workspaces: row.allow_all_workspaces,
    allowed_workspaces: row.allowed_workspaces,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A workspace may use the reference. */
export function allows(row: Pick<SecretReferenceRow, 'allow_all_workspaces' | 'allowed_workspaces'>, workspaceId: string): boolean {
  return row.allow_all_workspaces || row.allowed_workspaces.includes(workspaceId);
}
